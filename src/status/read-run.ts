import { basename, join, resolve } from 'node:path';

import { evaluationPath, runFiles } from '../store/run-paths.js';
import { readOpenModelCalls, type OpenModelCalls } from './model-calls.js';
import { entryNames, readOptional } from './optional-file.js';
import { readSpendingStatus, type SpendingStatus } from './spending.js';
import { readWorkPlans, type WorkPlanEntry } from '../store/work-plan.js';
import { readEpisodeFolders, type EpisodeFolder } from './episode-folders.js';
import { readRunHolder, readRunSteps, type RunHolder, type StepRow } from './run-steps.js';

/** Work lost to a model server's outage (`outages.jsonl`), as recorded. */
export interface OutageRow {
  at: string;
  what: string;
  error: string;
  outageSince: string | null;
}

/** A queue job issued by the coordinator (`queue/<job id>/`), with its workers' starts and finish. */
export interface QueueJob {
  jobId: string;
  stepKey: string;
  starts: number;
  finished: boolean;
}

/** Everything `mass status` reads of a run, read once at `readAtMs`. */
export interface RunRecords {
  name: string;
  directory: string;
  readAtMs: number;
  steps: StepRow[];
  holder: RunHolder;
  plans: Map<string, WorkPlanEntry>;
  episodes: EpisodeFolder[];
  outages: OutageRow[];
  queueJobs: QueueJob[];
  /** The spending journal against the configuration's budgets; null when the run has neither. */
  spending: SpendingStatus | null;
  /** The judge's and optimizer's model calls recorded as in flight (`model-calls-open.json`), live or left stale. */
  openModelCalls: OpenModelCalls;
}

interface ReadRunOptions {
  /** The moment the records are read at (for ages); now by default. */
  nowMs?: number;
  /** How far back throughput looks, in ms. */
  windowMs: number;
}

/** Reads a run's records for `mass status`: nothing is written and no lock is taken. */
export async function readRunRecords(runDirectory: string, options: ReadRunOptions): Promise<RunRecords> {
  const directory = resolve(runDirectory);
  const readAtMs = options.nowMs ?? Date.now();
  const steps = readRunSteps(directory);
  const [plans, episodes, outages, queueJobs, spending, openModelCalls] = await Promise.all([
    readWorkPlans(directory),
    readEpisodeFolders(directory, readAtMs - options.windowMs),
    readOutages(directory),
    readQueueJobs(directory),
    readSpendingStatus(directory),
    readOpenModelCalls(directory),
  ]);
  return {
    name: basename(directory),
    directory,
    readAtMs,
    steps,
    holder: readRunHolder(directory),
    plans,
    episodes,
    outages,
    queueJobs,
    spending,
    openModelCalls,
  };
}

/** The run's `outages.jsonl` and each evaluation's. */
async function readOutages(directory: string): Promise<OutageRow[]> {
  const files: string[] = [runFiles.outages];
  for (const name of await entryNames(join(directory, runFiles.evaluation))) {
    files.push(evaluationPath(name, 'outages'));
  }
  const rows: OutageRow[] = [];
  for (const file of files) {
    for (const line of (await readOptional(join(directory, file)))?.split('\n') ?? []) {
      if (line.trim() === '') continue;
      try {
        const row = JSON.parse(line) as Partial<Record<keyof OutageRow, unknown>>;
        if (typeof row.at !== 'string' || typeof row.what !== 'string') continue;
        rows.push({
          at: row.at,
          what: row.what,
          error: typeof row.error === 'string' ? row.error : '',
          outageSince: typeof row.outageSince === 'string' ? row.outageSince : null,
        });
      } catch {
        // A line torn by a kill: the rest still reads.
      }
    }
  }
  return rows.sort((a, b) => a.at.localeCompare(b.at));
}

async function readQueueJobs(directory: string): Promise<QueueJob[]> {
  const jobs: QueueJob[] = [];
  for (const jobId of await entryNames(join(directory, runFiles.queue))) {
    const folder = join(directory, runFiles.queue, jobId);
    const issued = await readOptional(join(folder, 'issued.json'));
    if (issued === undefined) continue;
    let record: { stepKey?: unknown; issue?: { nonce?: unknown } };
    try {
      record = JSON.parse(issued) as typeof record;
    } catch {
      continue;
    }
    const nonce = record.issue?.nonce;
    if (typeof record.stepKey !== 'string' || typeof nonce !== 'string') continue;
    const attempt = await entryNames(join(folder, nonce), { files: true });
    jobs.push({
      jobId,
      stepKey: record.stepKey,
      starts: attempt.filter((name) => name.startsWith('start-')).length,
      finished: attempt.includes('finished.json'),
    });
  }
  return jobs;
}
