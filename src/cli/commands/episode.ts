import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';

import { checkedBaseUrlFlag } from '../../config/base-url.js';
import { harnessWindow } from '../../harness/context-window.js';
import { servedContextLength } from '../../session/context-fit.js';
import { assertEpisodeDirectory } from '../../episode/episode-directory.js';
import { EPISODE_DEFAULTS, type EpisodeSpec } from '../../episode/episode-spec.js';
import { runEpisode } from '../../episode/run-episode.js';
import {} from '../../episode/sandbox-limits.js';
import { UserError } from '../../errors.js';
import {
  DEFAULT_CONTEXT_WINDOW,
  HARNESS_PROFILES,
  type HarnessProfile,
} from '../../harness/qwen-settings.js';
import { apiKeyFrom } from '../../model/create-model.js';
import { parseAllowEntry } from '../../proxy/egress-allow-list.js';
import { episodeFiles } from '../../store/run-paths.js';
import { loadTask } from '../../tasks/load-task.js';
import { parseWorkflow } from '../../workflow/parse-workflow.js';
import type { TeamDesign } from '../../workflow/workflow.js';
import { parseDurationSeconds, parsePositiveInteger } from '../duration.js';
import { parseSizeBytes } from '../size.js';

interface EpisodeFlags {
  task: string;
  workflow?: string;
  teacher?: boolean;
  singleAgent?: boolean;
  model: string;
  baseUrl: string;
  apiKeyEnv?: string;
  seed: string;
  dataSeed?: string;
  out: string;
  timeout: string;
  maxOutputTokens?: string;
  outputBudget?: string;
  cpuTime?: string;
  maxProcesses?: string;
  diskLimit?: string;
  sandbox: boolean;
  harnessProfile: string;
  privateDestination: string[];
  json?: boolean;
}

export async function episodeAction(flags: EpisodeFlags): Promise<void> {
  checkedBaseUrlFlag(flags.baseUrl, '--base-url', 'team');
  // Flags are checked before the folder is touched (`episodeSpecOf` reads them again).
  parseHarnessProfile(flags.harnessProfile);
  parseDurationSeconds(flags.timeout, '--timeout');
  // Before anything else: a folder that is not an episode's is refused, never emptied.
  await assertEpisodeDirectory(resolve(flags.out));
  if (flags.singleAgent && flags.workflow !== undefined)
    throw new UserError('--single-agent runs the bare task: a team design (--workflow) needs the agent tool');
  const workflow = await readWorkflow(flags.workflow, flags.task);
  for (const entry of flags.privateDestination) {
    const parsed = parseAllowEntry(entry);
    if (!parsed.ok) throw new UserError(`--private-destination: ${parsed.error}`);
  }
  const spec = await episodeSpecOf(flags, workflow);
  const { record, ran } = await runEpisode({
    ...spec,
    taskDir: flags.task,
    outDir: flags.out,
    apiKey: apiKeyFrom(flags.apiKeyEnv),
    log: flags.json ? undefined : (message) => console.error(`mass: ${message}`),
  });
  if (flags.json) {
    console.log(JSON.stringify(record, null, 2));
  } else {
    const out = resolve(flags.out);
    console.log(
      `${ran ? 'episode' : 'episode (already finished, nothing ran)'} ${record.episodeId}: ${record.status}`,
    );
    if (record.failure) console.log(`  failure: ${record.failure.kind}: ${record.failure.detail}`);
    console.log(
      `  ${record.modelCalls} model calls, ${record.delegations} delegations, ${record.usage.total.completionTokens} completion tokens`,
    );
    if (record.integrity.tampered)
      console.log(`  protected files changed: ${record.integrity.tamperedPaths.join(', ')}`);
    const { workspace, proxyLog, threads, harnessEvents, record: recordFile } = episodeFiles;
    console.log(`  ${out}/ ${workspace}/, ${proxyLog}, ${threads}, ${harnessEvents}, ${recordFile}`);
  }
  if (record.status === 'failure') process.exitCode = 1;
}

/** The episode the flags describe; the server is asked for its context length, so that the harness compacts in time. */
async function episodeSpecOf(flags: EpisodeFlags, workflow: TeamDesign | undefined): Promise<EpisodeSpec> {
  const maxOutputTokens = flags.maxOutputTokens
    ? parsePositiveInteger(flags.maxOutputTokens, '--max-output-tokens')
    : undefined;
  // The harness compacts its history in time for what the server serves (vLLM's max_model_len), when it says.
  const served = await servedContextLength({
    provider: 'openai-compatible',
    baseUrl: flags.baseUrl,
    model: flags.model,
    apiKeyEnv: flags.apiKeyEnv,
  });
  return {
    workflow,
    teacher: flags.teacher ?? false,
    singleAgent: flags.singleAgent ?? false,
    model: flags.model,
    baseUrl: flags.baseUrl,
    seed: parsePositiveInteger(flags.seed, '--seed'),
    dataSeed: flags.dataSeed === undefined ? undefined : parsePositiveInteger(flags.dataSeed, '--data-seed'),
    timeoutSeconds: parseDurationSeconds(flags.timeout, '--timeout'),
    maxOutputTokens,
    contextWindowSize:
      served === null
        ? undefined
        : harnessWindow(
            Math.min(DEFAULT_CONTEXT_WINDOW, served),
            maxOutputTokens ?? EPISODE_DEFAULTS.maxOutputTokens,
          ),
    outputBudget: flags.outputBudget
      ? parsePositiveInteger(flags.outputBudget, '--output-budget')
      : undefined,
    cpuSeconds: flags.cpuTime === undefined ? undefined : parseDurationSeconds(flags.cpuTime, '--cpu-time'),
    processLimit: flags.maxProcesses === undefined ? undefined : parseProcessLimit(flags.maxProcesses),
    diskBytes: flags.diskLimit === undefined ? undefined : parseSizeBytes(flags.diskLimit, '--disk-limit'),
    sandbox: flags.sandbox ? 'bubblewrap' : 'unsandboxed',
    harnessProfile: parseHarnessProfile(flags.harnessProfile),
    privateDestinations: flags.privateDestination,
  };
}

function parseProcessLimit(text: string): number {
  const limit = parsePositiveInteger(text, '--max-processes');
  if (limit === 0) throw new UserError('--max-processes must be at least 1');
  return limit;
}

function parseHarnessProfile(value: string): HarnessProfile {
  const profile = HARNESS_PROFILES.find((known) => known === value);
  if (profile === undefined)
    throw new UserError(`--harness-profile ${value}: choose ${HARNESS_PROFILES.join(' or ')}`);
  return profile;
}

async function readWorkflow(file: string | undefined, taskDir: string): Promise<TeamDesign | undefined> {
  if (file === undefined) return undefined;
  if (file === 'initial') return (await loadTask(taskDir)).manifest.workflow;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new UserError(`--workflow ${file}: cannot read the file`);
  }
  const parsed = parseWorkflow(text, `--workflow ${file}`);
  if (!parsed.ok)
    throw new UserError(`--workflow ${file} is not a valid workflow:\n  ${parsed.errors.join('\n  ')}`);
  return parsed.workflow;
}
