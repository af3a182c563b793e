import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { TrainingDataStats } from '../../src/distill/training-data-stats.js';
import { DataSplit, STATS_FILE, trainingDataFiles } from '../../src/distill/training-records.js';
import { writeTrainingData } from '../../src/distill/write-training-data.js';
import type { ModelGeneration } from '../../src/train/model-generation.js';

const distillFixtures = fileURLToPath(new URL('../fixtures/distill', import.meta.url));
const tasksDirectory = fileURLToPath(new URL('../fixtures/tasks', import.meta.url));

/** Debian's Python (the first python3 on some PATHs is another one); the trainer's data side needs nothing more. */
export const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

export const fakes = fileURLToPath(new URL('./fakes', import.meta.url));

/**
 * A small real training-data directory: the recorded team episode for training (an orchestrator and two subagent
 * windows), the single-agent one for validation, written by `writeTrainingData`.
 */
export async function buildDataset(outDir: string): Promise<string> {
  await writeTrainingData({
    episodes: [
      { dir: join(distillFixtures, 'team-a'), split: 'train' },
      { dir: join(distillFixtures, 'single'), split: 'validation' },
    ],
    outDir,
    taskDirectories: [tasksDirectory],
    limits: { windowTokens: 20_000, maxContextTokens: 1_024 },
  });
  return outDir;
}

export function baseGeneration(overrides: Partial<ModelGeneration> = {}): ModelGeneration {
  return {
    name: 'L0',
    parent: null,
    mergedPath: '/models/base',
    datasetId: null,
    metrics: null,
    servedAs: 'base',
    createdAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

/**
 * The files of a finished build, near empty, in milliseconds: for back-ends that pass the files on without reading
 * them (the command, the injected function, a fake script).
 */
export async function emptyDataset(outDir: string): Promise<string> {
  await mkdir(outDir, { recursive: true });
  for (const split of DataSplit.options) {
    for (const file of Object.values(trainingDataFiles(split))) await writeFile(join(outDir, file), '');
  }
  const counts = {
    threads: 0,
    conversations: 0,
    querySegments: 0,
    windows: 0,
    tokens: 0,
    supervisedTokens: 0,
  };
  const roles = { orchestrator: counts, subagent: counts, auxiliary: counts };
  const split = {
    episodes: 0,
    total: counts,
    perRole: roles,
    perTask: {},
    truncatedResponses: 0,
    skipped: [],
  };
  await TrainingDataStats.write(join(outDir, STATS_FILE), {
    model: 'Qwen3',
    mode: 'team',
    limits: { windowTokens: 49_152, maxContextTokens: 8_192, maxHeaderFraction: 0.9 },
    splits: { train: split, validation: split },
  });
  return outDir;
}

/** The error a promise rejects with; a promise that resolves fails the test. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof Error))
    throw new Error(`expected a rejection with an Error, got ${String(outcome)}`);
  return outcome;
}
