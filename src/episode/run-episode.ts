import { resolve } from 'node:path';

import { UserError } from '../errors.js';
import { captureQwenCodeOutput } from '../harness/launch-qwen-code.js';
import { episodePath } from '../store/run-paths.js';
import { workflowHash } from '../workflow/render.js';
import { collectEpisode } from './episode-collect.js';
import { withEpisodeEnvironment } from './episode-environment.js';
import { runHarness, type HarnessRun } from './episode-harness.js';
import { dataSeed, prepareEpisode } from './episode-prepare.js';
import { startEpisodeProxies } from './episode-proxies.js';
import { EpisodeRecord } from '../records/episode-record.js';
import type { EpisodeOptions } from './episode-spec.js';

export type { EpisodeOptions };

export interface EpisodeResult {
  record: EpisodeRecord;
  /** False when the directory already held this finished episode and nothing ran. */
  ran: boolean;
}

/**
 * One episode: a fresh workspace for the task and seed, the harness (qwen-code) in the sandbox talking to the model
 * through a recording proxy, then the outcome, the trajectories and the record, in five phases: prepare
 * (`episode-prepare.ts`), proxies (`episode-proxies.ts`), environment (`episode-environment.ts`), harness
 * (`episode-harness.ts`) and collect (`episode-collect.ts`). Re-running a finished episode
 * directory does nothing; a half-finished one is cleaned and run again; a directory holding anything else is
 * refused. The record's facts come from the proxy log, written by the host: agent code can write into the harness's
 * output, which is only captured (bounded) and cross-checked.
 */
export async function runEpisode(options: EpisodeOptions): Promise<EpisodeResult> {
  const outDir = resolve(options.outDir);
  const recordPath = episodePath(outDir, 'record');
  const existing = await EpisodeRecord.readIfPresent(recordPath);
  if (existing) {
    assertSameEpisode(existing, options, recordPath);
    return { record: existing, ran: false };
  }
  const episode = await prepareEpisode(options, outDir);
  const proxies = await startEpisodeProxies(options, episode);
  const output = captureQwenCodeOutput(outDir);
  let harnessRun: HarnessRun;
  try {
    harnessRun = await withEpisodeEnvironment(options, episode, proxies, (environment) =>
      runHarness(options, episode, proxies, environment, output),
    );
  } finally {
    await proxies.close();
    output.events.close();
    output.stderr.close();
  }
  const captured = { events: output.events.close(), stderr: output.stderr.close() };
  const record = await collectEpisode(options, episode, proxies, harnessRun, captured);
  await EpisodeRecord.write(recordPath, record);
  episode.log(`${record.status}${record.failure ? ` (${record.failure.kind})` : ''}`);
  return { record, ran: true };
}

function assertSameEpisode(existing: EpisodeRecord, options: EpisodeOptions, recordPath: string): void {
  const differences: string[] = [];
  if (existing.seed !== options.seed) differences.push(`sampling seed ${existing.seed}, not ${options.seed}`);
  if (existing.dataSeed !== dataSeed(options))
    differences.push(`data seed ${existing.dataSeed}, not ${dataSeed(options)}`);
  if (existing.model !== options.model) differences.push(`model "${existing.model}", not "${options.model}"`);
  if (existing.teacher !== (options.teacher ?? false)) differences.push(`teacher ${existing.teacher}`);
  const hash = options.workflow ? workflowHash(options.workflow) : null;
  if (existing.workflowHash !== hash)
    differences.push(`workflow ${existing.workflowHash ?? 'none'}, not ${hash ?? 'none'}`);
  if (differences.length > 0) {
    throw new UserError(
      `${recordPath} holds a finished episode with ${differences.join(', ')}: choose another output directory, or delete it to run again`,
    );
  }
}
