import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

import { ModelRegistry } from '../../src/records/registry.js';
import { emptyMetrics, TrainingMetrics } from '../../src/records/training-metrics.js';
import { openTestRun, temporaryDirectory } from './__fixtures__/test-run.js';
import { openRunDatabase } from '../../src/store/database.js';
import { runDatabaseMigrations } from '../../src/store/migrations.js';

/** The shape of `mass rsi`'s train step: absolute paths of the weights and the log, checkpoints among the metrics. */
const TrainOutput = z.object({
  adapterPath: z.string(),
  mergedPath: z.string(),
  metrics: TrainingMetrics,
  logFile: z.string(),
  dir: z.string(),
  base: z.string(),
  note: z.string(),
});
type TrainOutput = z.infer<typeof TrainOutput>;

function trainInto(runDirectory: string): TrainOutput {
  const out = join(runDirectory, 'train', 'L1');
  for (const folder of ['adapter', 'merged', 'checkpoint-10'])
    mkdirSync(join(out, folder), { recursive: true });
  writeFileSync(join(out, 'train.log'), 'trained\n');
  return {
    adapterPath: join(out, 'adapter'),
    mergedPath: join(out, 'merged'),
    metrics: {
      ...emptyMetrics(),
      checkpoints: [{ step: 10, path: join(out, 'checkpoint-10'), validationLoss: null }],
    },
    logFile: join(out, 'train.log'),
    dir: 'train/L1',
    base: '/models/qwen3-8b',
    note: `trained in ${out}`,
  };
}

/** Copies a closed run to another runs folder, as `cp -r runs/r /elsewhere/runs/` would. */
function copyRun(from: string): string {
  const runsDirectory = temporaryDirectory();
  cpSync(from, join(runsDirectory, 'test-run'), { recursive: true });
  return runsDirectory;
}

describe('paths in step outputs', () => {
  it('are stored relative to the run, so a copied run reads its own files, not the original’s', async () => {
    const original = temporaryDirectory();
    const run = openTestRun(original);
    const originalDirectory = run.directory;
    const first = await run.step('rsi/L1/train', () => trainInto(originalDirectory), { output: TrainOutput });
    expect(first.mergedPath).toBe(join(originalDirectory, 'train', 'L1', 'merged'));
    const stored = run.database.prepare('SELECT output_json FROM steps').pluck().get() as string;
    // Only the note, which is text, still names where the run was.
    expect(stored.replace(first.note, '')).not.toContain(originalDirectory);
    run.close();

    const copy = openTestRun(copyRun(originalDirectory));
    const skipped = await copy.step('rsi/L1/train', () => trainInto('/nowhere'), { output: TrainOutput });
    const inCopy = join(copy.directory, 'train', 'L1');
    expect(skipped).toEqual({
      adapterPath: join(inCopy, 'adapter'),
      mergedPath: join(inCopy, 'merged'),
      metrics: {
        ...first.metrics,
        checkpoints: [{ step: 10, path: join(inCopy, 'checkpoint-10'), validationLoss: null }],
      },
      logFile: join(inCopy, 'train.log'),
      // A relative path, a path outside the run and text that merely mentions the run are kept as they were.
      dir: 'train/L1',
      base: '/models/qwen3-8b',
      note: first.note,
    });
  });

  it('of a copied run repair its registry inside the copy', async () => {
    const original = temporaryDirectory();
    const run = openTestRun(original);
    const originalDirectory = run.directory;
    await run.step('rsi/L1/train', () => trainInto(originalDirectory), { output: TrainOutput });
    run.close();

    // The copy lost its registry; the loop registers the trained generation again from the step's output.
    const copy = openTestRun(copyRun(originalDirectory));
    rmSync(copy.path('train', 'registry.json'), { force: true });
    const trained = await copy.step('rsi/L1/train', () => trainInto('/nowhere'), { output: TrainOutput });
    const registry = await ModelRegistry.open(copy.directory);
    await registry.addBase({ model: 'Qwen/Qwen3-8B', servedAs: 'mass-L0' });
    await registry.addTrained({
      name: 'L1',
      parent: 'L0',
      datasetId: 'distill/L0/dataset',
      servedAs: 'mass-L1',
      result: trained,
    });

    const file = readFileSync(copy.path('train', 'registry.json'), 'utf8');
    expect(file).toContain('"./train/L1/merged"');
    expect(file).not.toContain(originalDirectory);
    expect(registry.require('L1').adapterPath).toBe(copy.path('train', 'L1', 'adapter'));
  });

  it('stored absolute by an older mass are read inside the run, where it is now and where it was', async () => {
    const runsDirectory = temporaryDirectory();
    const oldRun = openTestRun(runsDirectory);
    const oldDirectory = oldRun.directory;
    const legacyOutput = trainInto(oldDirectory);
    oldRun.close();
    // What an older mass left: schema version 1, the output as it was returned, absolute paths and all.
    rmSync(join(oldDirectory, 'mass.db'));
    const legacy = openRunDatabase(join(oldDirectory, 'mass.db'), runDatabaseMigrations.slice(0, 1));
    legacy
      .prepare(
        `INSERT INTO steps (key, status, attempts, started_at, finished_at, duration_ms, output_json)
         VALUES ('rsi/L1/train', 'done', 1, '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z', 60000, ?)`,
      )
      .run(JSON.stringify(legacyOutput));
    legacy.close();
    const copied = copyRun(oldDirectory);

    // Opened where it was written.
    const inPlace = openTestRun(runsDirectory);
    expect(await inPlace.step('rsi/L1/train', () => trainInto('/nowhere'), { output: TrainOutput })).toEqual(
      legacyOutput,
    );
    inPlace.close();

    // Copied by the older mass, then opened by this one; the original removed meanwhile.
    rmSync(oldDirectory, { recursive: true, force: true });
    const copy = openTestRun(copied);
    const read = await copy.step('rsi/L1/train', () => trainInto('/nowhere'), { output: TrainOutput });
    expect(read.mergedPath).toBe(copy.path('train', 'L1', 'merged'));
    expect(read.metrics.checkpoints[0]!.path).toBe(copy.path('train', 'L1', 'checkpoint-10'));
    expect(read.logFile).toBe(copy.path('train', 'L1', 'train.log'));
    expect(read.base).toBe('/models/qwen3-8b');
    copy.close();
    const database = new Database(join(copied, 'test-run', 'mass.db'), { readonly: true });
    const row = database.prepare('SELECT output_json, output_paths FROM steps').get() as Record<
      string,
      string
    >;
    database.close();
    expect(row.output_json!.replace(legacyOutput.note, '')).not.toContain(oldDirectory);
    expect(JSON.parse(row.output_paths!)).toContainEqual(['mergedPath']);
  });
});
