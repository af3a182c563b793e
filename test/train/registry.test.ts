import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { runFiles } from '../../src/store/run-paths.js';
import { adapterBaseOf } from '../../src/records/model-generation.js';
import { ModelRegistry } from '../../src/records/registry.js';
import { emptyMetrics, type TrainingResult } from '../../src/records/training-metrics.js';
import { temporaryDirectory } from '../support/fixtures.js';

let directory: { path: string; remove: () => void };
let run: string;

beforeEach(() => {
  directory = temporaryDirectory('mass-registry-');
  run = join(directory.path, 'run');
  mkdirSync(join(run, 'train', 'L1', 'checkpoints', 'step-000150'), { recursive: true });
  mkdirSync(join(run, 'train', 'L1', 'merged'), { recursive: true });
  mkdirSync(join(directory.path, 'models', 'qwen3'), { recursive: true });
});
afterEach(() => directory.remove());

function trainedL1(): TrainingResult {
  const checkpoint = {
    step: 150,
    path: join(run, 'train', 'L1', 'checkpoints', 'step-000150'),
    validationLoss: 0.8,
  };
  return {
    adapterPath: checkpoint.path,
    mergedPath: join(run, 'train', 'L1', 'merged'),
    logFile: join(run, 'train', 'L1', 'train.log'),
    metrics: {
      ...emptyMetrics(),
      steps: 150,
      supervisedTokensProcessed: 1000,
      checkpoints: [checkpoint],
      chosenCheckpoint: checkpoint,
    },
  };
}

async function registryWithL1(): Promise<ModelRegistry> {
  const registry = await ModelRegistry.open(run);
  await registry.addBase({ model: join(directory.path, 'models', 'qwen3'), servedAs: 'qwen3' });
  await registry.addTrained({
    name: registry.nextName(),
    parent: 'L0',
    datasetId: 'distill/L0/dataset',
    servedAs: 'mass-L1',
    result: trainedL1(),
    createdAt: new Date('2026-02-03T04:05:06Z'),
  });
  return registry;
}

describe('the model registry', () => {
  it('records generations in train/registry.json and reads them back', async () => {
    await registryWithL1();
    const reopened = await ModelRegistry.open(run);

    expect(reopened.list().map((generation) => generation.name)).toEqual(['L0', 'L1']);
    expect(reopened.nextName()).toBe('L2');
    expect(reopened.latest()).toMatchObject({
      name: 'L1',
      parent: 'L0',
      adapterPath: join(run, 'train', 'L1', 'checkpoints', 'step-000150'),
      mergedPath: join(run, 'train', 'L1', 'merged'),
      datasetId: 'distill/L0/dataset',
      servedAs: 'mass-L1',
      createdAt: '2026-02-03T04:05:06.000Z',
      metrics: { steps: 150, supervisedTokensProcessed: 1000, chosenCheckpoint: { step: 150 } },
    });
    expect(reopened.require('L0')).toMatchObject({
      parent: null,
      mergedPath: join(directory.path, 'models', 'qwen3'),
      datasetId: null,
      metrics: null,
    });

    const stored = JSON.parse(readFileSync(join(run, runFiles.registry), 'utf8')) as {
      schemaVersion: number;
      kind: string;
      generations: Array<{ adapterPath?: string; mergedPath?: string }>;
    };
    expect(stored.schemaVersion).toBe(1);
    expect(stored.kind).toBe('model-registry');
    // Inside the run: relative, so the run directory can move; outside it: absolute.
    expect(stored.generations[1]).toMatchObject({
      adapterPath: './train/L1/checkpoints/step-000150',
      mergedPath: './train/L1/merged',
    });
    expect(stored.generations[0]!.mergedPath).toBe(join(directory.path, 'models', 'qwen3'));
  });

  it('records which generation an adapter goes over, and reads one without it as over its parent', async () => {
    const registry = await registryWithL1();
    expect(adapterBaseOf(registry.require('L1'))).toBe('L0');
    expect(adapterBaseOf(registry.require('L0'))).toBeNull();
    mkdirSync(join(run, 'train', 'L2', 'checkpoints', 'step-000150'), { recursive: true });
    const l2 = {
      name: 'L2',
      parent: 'L1',
      datasetId: 'distill/L1/dataset',
      servedAs: 'mass-L2',
      result: {
        ...trainedL1(),
        adapterPath: join(run, 'train', 'L2', 'checkpoints', 'step-000150'),
        mergedPath: undefined,
      },
    };
    await expect(registry.addTrained({ ...l2, adapterBase: 'L9' })).rejects.toThrow(
      /generation L2: unknown adapterBase L9; registered: L0, L1/,
    );
    await expect(
      registry.addTrained({ ...l2, adapterBase: 'L0', result: { ...trainedL1(), adapterPath: undefined } }),
    ).rejects.toThrow(/adapterBase L0 is given, but it has no adapter/);
    await registry.addTrained({ ...l2, adapterBase: 'L0' });

    const reopened = await ModelRegistry.open(run);
    expect(reopened.require('L2')).toMatchObject({ parent: 'L1', adapterBase: 'L0', mergedPath: undefined });
    expect(adapterBaseOf(reopened.require('L2'))).toBe('L0');
    const stored = JSON.parse(readFileSync(join(run, runFiles.registry), 'utf8')) as {
      generations: Array<Record<string, unknown>>;
    };
    expect(stored.generations.map((generation) => generation.adapterBase)).toEqual([
      undefined,
      undefined,
      'L0',
    ]);
  });

  it('follows a run directory that moved', async () => {
    await registryWithL1();
    const moved = join(directory.path, 'moved');
    renameSync(run, moved);
    const registry = await ModelRegistry.open(moved);
    expect(registry.require('L1').mergedPath).toBe(join(moved, 'train', 'L1', 'merged'));
    await expect(registry.checkFiles('L1')).resolves.toMatchObject({ name: 'L1' });
  });

  it('keeps a base model given by id as it is', async () => {
    const registry = await ModelRegistry.open(run);
    await registry.addBase({ model: 'Qwen/Qwen3-30B-A3B', servedAs: 'qwen3' });
    expect((await ModelRegistry.open(run)).require('L0').mergedPath).toBe('Qwen/Qwen3-30B-A3B');
  });

  it('refuses duplicates, unknown parents and generations without their files', async () => {
    const registry = await registryWithL1();
    const trained = (overrides: Partial<Parameters<ModelRegistry['addTrained']>[0]>) =>
      registry.addTrained({
        name: 'L2',
        parent: 'L1',
        datasetId: 'distill/L1/dataset',
        servedAs: 'mass-L2',
        result: trainedL1(),
        ...overrides,
      });

    await expect(trained({ name: 'L1' })).rejects.toThrow(/generation L1 is already registered/);
    await expect(trained({ servedAs: 'mass-L1' })).rejects.toThrow(
      /the served name "mass-L1" is already generation L1's/,
    );
    await expect(trained({ parent: 'L7' })).rejects.toThrow(/unknown parent L7; registered: L0, L1/);
    await expect(
      trained({ result: { ...trainedL1(), mergedPath: join(run, 'train', 'L2', 'merged') } }),
    ).rejects.toThrow(/generation L2: its weights .*train\/L2\/merged do not exist/);
    await expect(
      trained({ result: { ...trainedL1(), adapterPath: undefined, mergedPath: undefined } }),
    ).rejects.toThrow(/needs its weights: adapterPath, mergedPath or both/);
    await expect(registry.addBase({ name: 'B', model: './no/such/model', servedAs: 'b' })).rejects.toThrow(
      /generation B: its weights .*no\/such\/model do not exist/,
    );
    await expect(
      registry.add({ name: 'odd name', parent: null, mergedPath: 'x/y', datasetId: null, servedAs: 'odd' }),
    ).rejects.toThrow(UserError);
    expect(() => registry.require('L9')).toThrow(/no generation L9; registered: L0, L1/);

    // Nothing refused was written.
    expect((await ModelRegistry.open(run)).list()).toHaveLength(2);
  });

  it('says when a generation lost its files', async () => {
    const registry = await registryWithL1();
    rmSync(join(run, 'train', 'L1', 'merged'), { recursive: true });
    await expect(registry.checkFiles('L1')).rejects.toThrow(
      /generation L1's weights .*train\/L1\/merged are missing; restore them or train L1 again/,
    );
  });

  it('refuses a damaged or foreign file with the advice of the record store', async () => {
    mkdirSync(join(run, 'train'), { recursive: true });
    writeFileSync(join(run, runFiles.registry), JSON.stringify({ schemaVersion: 1, kind: 'episode' }));
    await expect(ModelRegistry.open(run)).rejects.toThrow(
      /holds a "episode" record where a "model-registry"/,
    );
    writeFileSync(join(run, runFiles.registry), JSON.stringify({ schemaVersion: 2, kind: 'model-registry' }));
    await expect(ModelRegistry.open(run)).rejects.toThrow(/written by a newer mass/);
  });
});
