import { writeFile } from 'node:fs/promises';

import { summariseHarnessEvents } from '../harness/harness-events.js';
import { QWEN_CODE_VERSION } from '../harness/qwen-code.js';
import { episodeSpendFacts } from '../cost/episode-cost.js';
import { tokenUsageFromWire } from '../model/types.js';
import { reportedUsage } from '../proxy/call-metering.js';
import { readProxyLog, wasRetried, type ProxyLogRow } from '../proxy/log-row.js';
import { episodePath } from '../store/run-paths.js';
import { sha256WorkspaceFile } from '../tasks/integrity.js';
import type { EpisodeNetwork } from '../tasks/task-network.js';
import { workflowHash } from '../workflow/render.js';
import { episodeFacts } from './episode-facts.js';
import type { HarnessRun } from './episode-harness.js';
import { dataSeed, type PreparedEpisode } from './episode-prepare.js';
import type { EpisodeProxies } from './episode-proxies.js';
import type { EpisodeRecord } from '../records/episode-record.js';
import { classifyOutcome } from './outcome.js';
import { isChatRow } from '../records/request-provenance.js';
import type { EpisodeOptions } from './episode-spec.js';

/** The harness's output as captured (bounded), for the record. */
type CapturedOutput = NonNullable<EpisodeRecord['harnessOutput']>['events'];

/**
 * The collect phase, once the proxies are closed: the protected assets checked, the threads and facts read from the
 * proxy's log (written by the host; the harness's own output is only cross-checked), the outcome classified and the
 * record made. Nothing is written but the threads file: the caller writes the record.
 */
export async function collectEpisode(
  options: EpisodeOptions,
  episode: PreparedEpisode,
  proxies: EpisodeProxies,
  harnessRun: HarnessRun,
  captured: { events: CapturedOutput; stderr: CapturedOutput },
): Promise<EpisodeRecord> {
  if (proxies.proxy.logError) throw proxies.proxy.logError;
  if (proxies.egress?.logError) throw proxies.egress.logError;
  const { outDir } = episode;
  const integrity = await protectedAssetsAfter(episode);
  const rows = await readProxyLog(episodePath(outDir, 'proxyLog'));
  const facts = episodeFacts(rows, { episodePrompt: episode.prompt });
  await writeFile(
    episodePath(outDir, 'threads'),
    facts.threads.map((thread) => `${JSON.stringify(thread)}\n`).join(''),
  );
  const harnessRows = rows.filter((row) => !facts.forgedRequests.has(row.seq));
  const harness = await summariseHarnessEvents(episodePath(outDir, 'harnessEvents'));
  const run = harnessRun.result;
  const stoppedAt = proxies.stoppedAt();
  const outcome = classifyOutcome({
    harness,
    orchestratorFinal: facts.orchestratorFinal,
    lastToolCalls: facts.lastToolCalls,
    stoppedByForgedRequest: stoppedAt !== null && facts.forgedRequests.has(stoppedAt) ? stoppedAt : null,
    process: {
      exitCode: run.exitCode,
      signal: run.signal,
      timedOut: run.timedOut,
      limitExceeded:
        run.limitExceeded === 'cpu-time'
          ? 'cpu'
          : run.limitExceeded === 'wall-clock'
            ? null
            : run.limitExceeded,
      ...(run.started === undefined ? {} : { started: run.started }),
    },
    rows: harnessRows,
    tamperedPaths: integrity.tamperedPaths,
    outputBudgetSpent: proxies.proxy.outputBudgetSpent,
  });
  return episodeRecord({
    options,
    episode,
    proxies,
    harnessRun,
    outcome,
    facts,
    harnessRows,
    integrity,
    harnessOutput: { ...captured, unreadableEventLines: harness.unreadableLines },
  });
}

/** Each protected asset's digest before and after the run (null when it is gone), and those that changed. */
async function protectedAssetsAfter(episode: PreparedEpisode): Promise<EpisodeRecord['integrity']> {
  const assets = [];
  for (const asset of episode.protectedAssets) {
    let after: string | null = null;
    try {
      after = await sha256WorkspaceFile(episode.workspaceDir, asset.path);
    } catch {
      after = null;
    }
    assets.push({ path: asset.path, before: asset.sha256, after });
  }
  const tamperedPaths = assets.filter((asset) => asset.after !== asset.before).map((asset) => asset.path);
  return { assets, tampered: tamperedPaths.length > 0, tamperedPaths };
}

/** The episode's record from what the phases found. */
function episodeRecord(found: {
  options: EpisodeOptions;
  episode: PreparedEpisode;
  proxies: EpisodeProxies;
  harnessRun: HarnessRun;
  outcome: ReturnType<typeof classifyOutcome>;
  facts: ReturnType<typeof episodeFacts>;
  harnessRows: ProxyLogRow[];
  integrity: EpisodeRecord['integrity'];
  harnessOutput: EpisodeRecord['harnessOutput'];
}): EpisodeRecord {
  const { options, episode, outcome, facts, harnessRun } = found;
  const run = harnessRun.result;
  const chatRows = found.harnessRows.filter(isChatRow);
  const spend = episodeSpendFacts(chatRows.map((row) => tokenUsageFromWire(reportedUsage(row.response))));
  const endedAt = new Date();
  const { egress } = found.proxies;
  const { network } = episode;
  return {
    episodeId: episode.episodeId,
    task: { id: episode.task.manifest.id, dir: episode.task.dir },
    workflowHash: options.workflow ? workflowHash(options.workflow) : null,
    teacher: options.teacher ?? false,
    seed: options.seed,
    dataSeed: dataSeed(options),
    model: options.model,
    baseUrl: options.baseUrl,
    status: outcome.status,
    failure: outcome.failure,
    timings: {
      startedAt: episode.startedAt.toISOString(),
      endedAt: endedAt.toISOString(),
      durationMs: endedAt.getTime() - episode.startedAt.getTime(),
      harnessMs: Math.round(run.wallSeconds * 1000),
    },
    usage: {
      ...usageOf(facts.threads),
      ...(spend.cachedPromptTokens ? { cachedPromptTokens: spend.cachedPromptTokens } : {}),
    },
    ...(spend.cost ? { cost: spend.cost } : {}),
    modelCalls: chatRows.length,
    failedModelCalls: chatRows.filter((row) => row.error !== null || row.status === null || row.status >= 400)
      .length,
    retriedModelCalls: chatRows.filter(wasRetried).length,
    delegations: facts.delegations,
    forged: facts.forged,
    harnessOutput: found.harnessOutput,
    integrity: found.integrity,
    sandbox: {
      enabled: run.sandboxed,
      exitCode: run.exitCode,
      signal: run.signal,
      limitExceeded: run.limitExceeded,
      cpuSeconds: run.cpuSeconds,
      peakMemoryBytes: run.peakMemoryBytes,
      ...harnessRun.agentPaths,
      ...(harnessRun.gpu === null ? {} : { gpu: harnessRun.gpu }),
    },
    ...(egress === null || network === false
      ? {}
      : { egress: { ...egressRecord(network), ...egress.counts() } }),
    harness: {
      name: 'qwen-code',
      version: QWEN_CODE_VERSION,
      nodeVersion: episode.qwenCode.node.version,
      profile: episode.profile,
      texts: harnessRun.texts,
    },
  };
}

/** The tokens of each thread the harness made (not the forged ones), and their sum. */
function usageOf(threads: ReturnType<typeof episodeFacts>['threads']): EpisodeRecord['usage'] {
  const perThread = threads
    .filter((thread) => thread.forged !== true)
    .map((thread) => ({
      threadId: thread.threadId,
      role: thread.role,
      calls: thread.calls,
      ...thread.usage,
    }));
  const total = perThread.reduce(
    (sum, thread) => ({
      promptTokens: sum.promptTokens + thread.promptTokens,
      completionTokens: sum.completionTokens + thread.completionTokens,
      reasoningTokens: sum.reasoningTokens + thread.reasoningTokens,
    }),
    { promptTokens: 0, completionTokens: 0, reasoningTokens: 0 },
  );
  return { total, perThread };
}

/** What the record says the agents were allowed: the allow-list, or every public host. */
function egressRecord(network: Exclude<EpisodeNetwork, false>): { allow: string[]; anyPublicHost?: true } {
  return 'anyPublicHost' in network ? { allow: [], anyPublicHost: true } : { allow: network.allow };
}
