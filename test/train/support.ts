import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { TrainingDataStats } from '../../src/records/training-data-stats.js';
import {
  DataSplit,
  STATS_FILE,
  trainingDataFiles,
  type TrainingWindow,
} from '../../src/records/training-records.js';
import { writeTrainingData } from '../../src/distill/write-training-data.js';
import type { ModelGeneration } from '../../src/records/model-generation.js';

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

/**
 * A training-data directory of short windows over token ids 2–63, for the tiny random models of
 * `python/tiny_models.py` (the real builder's windows hold Qwen3's ids and thousands of tokens): one task, an
 * orchestrator and two subagent windows to train on, two windows to validate on. Each window counts upwards from a
 * start, so there is something to learn; the last `supervised` tokens are labelled.
 */
export async function tinyDataset(outDir: string): Promise<string> {
  await emptyDataset(outDir);
  const shapes = {
    train: [
      { role: 'orchestrator', start: 2, length: 16, supervised: 6 },
      { role: 'subagent', start: 10, length: 40, supervised: 30 },
      { role: 'subagent', start: 20, length: 32, supervised: 20 },
    ],
    validation: [
      { role: 'orchestrator', start: 5, length: 16, supervised: 6 },
      { role: 'subagent', start: 30, length: 36, supervised: 24 },
    ],
  } as const;
  const stats = await TrainingDataStats.read(join(outDir, STATS_FILE));
  for (const split of DataSplit.options) {
    const windows: TrainingWindow[] = shapes[split].map((shape, index) => {
      const inputIds = Array.from({ length: shape.length }, (_, at) => 2 + ((shape.start + at) % 62));
      const context = shape.length - shape.supervised;
      return {
        schemaVersion: 1,
        id: `tiny-${split}/${shape.role}-${index}/0/0/0`,
        split,
        episode: `tiny-${split}`,
        task: 'tiny-count',
        role: shape.role,
        thread: `${shape.role}-${index}`,
        threadSegment: 0,
        querySegment: 0,
        window: 0,
        windowsInQuerySegment: 1,
        targets: [1],
        tokens: { header: context, context: 0, body: shape.supervised, total: shape.length },
        supervisedTokens: shape.supervised,
        input_ids: inputIds,
        labels: inputIds.map((id, at) => (at < context ? -100 : id)),
      };
    });
    const files = trainingDataFiles(split);
    const lines = (records: object[]) => records.map((record) => `${JSON.stringify(record)}\n`).join('');
    await writeFile(join(outDir, files.windows), lines(windows));
    await writeFile(
      join(outDir, files.index),
      lines(windows.map(({ input_ids: _ids, labels: _labels, ...summary }) => summary)),
    );
    const total = stats.splits[split]!.total;
    stats.splits[split]!.total = {
      ...total,
      windows: windows.length,
      tokens: windows.reduce((sum, window) => sum + window.tokens.total, 0),
      supervisedTokens: windows.reduce((sum, window) => sum + window.supervisedTokens, 0),
    };
  }
  await TrainingDataStats.write(join(outDir, STATS_FILE), stats);
  return outDir;
}

/** Why `python` cannot train (it lacks torch, transformers, peft or accelerate), or undefined when it can. */
export function trainerLibrariesMissing(
  python: string,
  environment: Record<string, string> = {},
): string | undefined {
  const probe = spawnSync(python, ['-c', 'import torch, transformers, peft, accelerate'], {
    encoding: 'utf8',
    env: { ...process.env, ...environment },
  });
  if (probe.error) return `${python} cannot run (${probe.error.message})`;
  if (probe.status !== 0)
    return `${python} lacks the trainer's libraries (${probe.stderr.trim().split('\n').at(-1)})`;
  return undefined;
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
