import { existsSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { z } from 'zod';

import { runFiles } from '../store/run-paths.js';
import type { PlanStage } from './plan-types.js';

/** A stage's wall time in a run: from its first step's start to its last step's end. */
export interface StageWallTime {
  stage: PlanStage;
  generation: string | null;
  seconds: number;
}

/** The training steps a run's trainings made, and their seconds. */
export interface TrainingMeasure {
  trainings: number;
  steps: number;
  seconds: number;
}

const StepRow = z.object({
  key: z.string(),
  started_at: z.string(),
  finished_at: z.string(),
  duration_ms: z.number().nullable(),
  output_json: z.string().nullable(),
});
type StepRow = z.infer<typeof StepRow>;

/** The stage and generation a step key belongs to; null for steps no stage of a plan counts. */
export function stageOfKey(key: string): { stage: PlanStage; generation: string | null } | null {
  const [root, first, second, third] = key.split('/');
  if (root === 'search' && first) return { stage: 'search', generation: first };
  if (root === 'distill' && first) {
    if (second === 'dataset') return { stage: 'training', generation: first };
    return { stage: third === 'collect' ? 'collection' : 'tournament', generation: first };
  }
  if (root === 'rsi' && second === 'train' && first) {
    // `rsi/L1/train` trains L1 from L0's round.
    return { stage: 'training', generation: `L${Number(first.slice(1)) - 1}` };
  }
  if (root === 'evaluation') return { stage: 'evaluation', generation: null };
  if (root === 'benchmarks' || root === 'benchmark') return { stage: 'benchmark', generation: null };
  return null;
}

/** Each stage's wall time in the run's step index (`mass.db`); none when it has no index. */
export function stageWallTimes(runDirectory: string): StageWallTime[] {
  const groups = new Map<
    string,
    { stage: PlanStage; generation: string | null; start: number; end: number }
  >();
  for (const row of doneSteps(runDirectory)) {
    const stage = stageOfKey(row.key);
    if (!stage) continue;
    const id = `${stage.stage}\u0000${stage.generation ?? ''}`;
    const start = Date.parse(row.started_at);
    const end = Date.parse(row.finished_at);
    const group = groups.get(id);
    if (!group) groups.set(id, { ...stage, start, end });
    else {
      group.start = Math.min(group.start, start);
      group.end = Math.max(group.end, end);
    }
  }
  return [...groups.values()].map(({ stage, generation, start, end }) => ({
    stage,
    generation,
    seconds: (end - start) / 1000,
  }));
}

const TrainOutput = z.object({ metrics: z.object({ steps: z.number().nullable() }) });

/** The steps and seconds of the run's finished trainings (`rsi/<L>/train`); null when it trained none. */
export function trainingSteps(runDirectory: string): TrainingMeasure | null {
  let trainings = 0;
  let steps = 0;
  let seconds = 0;
  for (const row of doneSteps(runDirectory)) {
    if (!/^rsi\/[^/]+\/train$/.test(row.key) || row.output_json === null) continue;
    const output = TrainOutput.safeParse(JSON.parse(row.output_json));
    if (!output.success || output.data.metrics.steps === null) continue;
    trainings++;
    steps += output.data.metrics.steps;
    seconds += (row.duration_ms ?? 0) / 1000;
  }
  return trainings === 0 ? null : { trainings, steps, seconds };
}

/**
 * The mean seconds of the run's finished steps whose key matches `pattern`, and how many there were: a judgment step
 * holds its bundles' building and its calls, which is what a judgment takes in the run. Null when none matched.
 */
export function meanStepSeconds(
  runDirectory: string,
  pattern: RegExp,
): { seconds: number; steps: number } | null {
  const matched = doneSteps(runDirectory).filter((row) => pattern.test(row.key) && row.duration_ms !== null);
  if (matched.length === 0) return null;
  const total = matched.reduce((sum, row) => sum + row.duration_ms!, 0);
  return { seconds: total / matched.length / 1000, steps: matched.length };
}

function doneSteps(runDirectory: string): StepRow[] {
  const file = join(runDirectory, runFiles.database);
  if (!existsSync(file)) return [];
  const database = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = database
      .prepare(
        `SELECT key, started_at, finished_at, duration_ms, output_json FROM steps WHERE status = 'done'`,
      )
      .all();
    return z.array(StepRow).parse(rows);
  } finally {
    database.close();
  }
}
