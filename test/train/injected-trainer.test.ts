import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SystemError } from '../../src/errors.js';
import { injectedTrainer, type TrainWeights } from '../../src/train/injected-trainer.js';
import type { TrainOptions } from '../../src/train/trainer.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { baseGeneration, emptyDataset } from './support.js';

const directory = temporaryDirectory('mass-train-injected-');
let dataset: string;

beforeAll(async () => {
  dataset = await emptyDataset(join(directory.path, 'dataset'));
});
afterAll(() => directory.remove());

const options = (name: string): TrainOptions => ({
  dataset,
  parent: baseGeneration({ mergedPath: join(directory.path, 'parent.json') }),
  outDir: join(directory.path, name),
  seed: 1,
});

describe("a trainer given as a function (the toy model's)", () => {
  it('gets the parent weights, the dataset and its directory, and returns the new weights as merged', async () => {
    const calls: string[][] = [];
    const trainWeights: TrainWeights = async (parentWeightsPath, datasetDir, outDir) => {
      calls.push([parentWeightsPath, datasetDir, outDir]);
      await writeFile(join(outDir, 'weights.json'), '{"bias": 1}');
      return { weightsPath: 'weights.json', metrics: { steps: 4, trainLoss: [{ step: 4, loss: 0.25 }] } };
    };
    const result = await injectedTrainer(trainWeights, 'toy').train(options('toy'));
    const out = join(directory.path, 'toy');

    expect(calls).toEqual([[join(directory.path, 'parent.json'), dataset, out]]);
    expect(result.mergedPath).toBe(join(out, 'weights.json'));
    expect(result.adapterPath).toBeUndefined();
    expect(result.metrics).toMatchObject({ steps: 4, trainLoss: [{ step: 4, loss: 0.25 }], checkpoints: [] });
    expect(await readFile(result.logFile, 'utf8')).toMatch(
      /toy: training .*parent\.json[^]*wrote .*weights\.json/,
    );
  });

  it('refuses weights that are not there and metrics that are not metrics', async () => {
    const nothing: TrainWeights = () => Promise.resolve({ weightsPath: 'absent.json' });
    await expect(injectedTrainer(nothing, 'toy').train(options('absent'))).rejects.toThrow(
      /the toy trainer returned .*absent\.json, which does not exist/,
    );
    const badMetrics: TrainWeights = async (_parent, _data, outDir) => {
      await mkdir(join(outDir, 'w'));
      return { weightsPath: 'w', metrics: { steps: -1 } };
    };
    await expect(injectedTrainer(badMetrics).train(options('bad'))).rejects.toThrow(SystemError);
  });

  it('trains over the weights it is given, and refuses an adapter to start from: it makes full weights', async () => {
    const seen: string[] = [];
    const trainWeights: TrainWeights = async (parentWeightsPath, _datasetDir, outDir) => {
      seen.push(parentWeightsPath);
      await writeFile(join(outDir, 'weights.json'), '{}');
      return { weightsPath: 'weights.json' };
    };
    const base = baseGeneration({ mergedPath: join(directory.path, 'base.json') });
    await injectedTrainer(trainWeights, 'toy').train({ ...options('over-base'), base });
    expect(seen).toEqual([join(directory.path, 'base.json')]);
    await expect(
      injectedTrainer(trainWeights, 'toy').train({ ...options('from-adapter'), initAdapter: '/adapters/L1' }),
    ).rejects.toThrow(
      /the toy trainer makes full weights and cannot start from an adapter \(\/adapters\/L1\)/,
    );
  });

  it('logs a failure of the function and passes it on', async () => {
    const failing: TrainWeights = () => Promise.reject(new Error('weights file is corrupt'));
    await expect(injectedTrainer(failing).train(options('failing'))).rejects.toThrow(
      'weights file is corrupt',
    );
    expect(await readFile(join(directory.path, 'failing', 'train.log'), 'utf8')).toContain(
      'failed: weights file is corrupt',
    );
  });
});
