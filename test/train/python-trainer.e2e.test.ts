import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SystemError, UserError } from '../../src/errors.js';
import { pythonTrainer } from '../../src/train/python-trainer.js';
import type { TrainOptions } from '../../src/train/trainer.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { baseGeneration, emptyDataset, fakes } from './support.js';

const fakeScript = join(fakes, 'fake-python-trainer.mjs');
const directory = temporaryDirectory('mass-train-python-');
let dataset: string;

beforeAll(async () => {
  dataset = await emptyDataset(join(directory.path, 'dataset'));
});
afterAll(() => directory.remove());

describe('the python back-end, run against a fake script', () => {
  const options = (name: string, overrides: Partial<TrainOptions> = {}): TrainOptions => ({
    dataset,
    parent: baseGeneration({ mergedPath: '/models/qwen3-base' }),
    outDir: join(directory.path, name),
    seed: 7,
    hyper: { steps: 2, evalEvery: 1, checkpointEvery: 1 },
    ...overrides,
  });
  const fake = (mode: string) =>
    pythonTrainer({ python: process.execPath, script: fakeScript, env: { FAKE_TRAINER_MODE: mode } });

  it('passes data, output and configuration, streams the log and reads the report back', async () => {
    const result = await fake('ok').train(options('ok'));
    const out = join(directory.path, 'ok');

    const { script, args } = JSON.parse(readFileSync(join(out, 'argv.json'), 'utf8')) as {
      script: string;
      args: string[];
    };
    expect(script).toBe(fakeScript);
    expect(args).toEqual(['--data', dataset, '--out', out, '--config', join(out, 'config.json')]);
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as Record<string, unknown>;
    expect(config).toMatchObject({
      parentModel: '/models/qwen3-base',
      seed: 7,
      hyper: { steps: 2, loraRank: 64, loraAlpha: 128, learningRate: 3e-5, adamBetas: [0.9, 0.95] },
    });

    expect(result.logFile).toBe(join(out, 'train.log'));
    expect(readFileSync(result.logFile, 'utf8')).toMatch(
      /loading \/models\/qwen3-base\nstep 1\/2 loss 1.0\n/,
    );
    expect(result.adapterPath).toBe(join(out, 'checkpoints/step-000001'));
    expect(result.mergedPath).toBe(join(out, 'merged'));
    expect(result.metrics).toMatchObject({
      steps: 2,
      supervisedTokensProcessed: 700,
      validationLoss: [
        { step: 1, loss: 1.1 },
        { step: 2, loss: 1.3 },
      ],
      chosenCheckpoint: { step: 1, path: join(out, 'checkpoints/step-000001'), validationLoss: 1.1 },
    });
    expect(result.metrics.checkpoints.map((checkpoint) => checkpoint.path)).toEqual([
      join(out, 'checkpoints/step-000001'),
      join(out, 'checkpoints/step-000002'),
    ]);
  });

  it('reports a crash as a system error naming the log and quoting its end', async () => {
    const error = await fake('crash')
      .train(options('crash'))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SystemError);
    const message = (error as Error).message;
    expect(message).toContain(
      `the python trainer exited with 1; its log is ${join(directory.path, 'crash', 'train.log')}`,
    );
    expect(message).toContain('CUDA out of memory');
  });

  it("reports the script's refusal (exit 2) as a user error with its message and the log", async () => {
    const error = await fake('refuse')
      .train(options('refuse'))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UserError);
    expect((error as Error).message).toMatch(/refused: .*window 3: a label differs from its input id/);
    expect((error as Error).message).toContain(join(directory.path, 'refuse', 'train.log'));
  });

  it('refuses a report whose weights are missing, and a run that wrote no report', async () => {
    await expect(fake('missing-weights').train(options('missing'))).rejects.toThrow(
      /reported .*step-999999, which does not exist; see .*train\.log/,
    );
    await expect(fake('no-report').train(options('no-report'))).rejects.toThrow(
      /finished without writing .*no-report\/report\.json; see .*train\.log/,
    );
  });

  it('does not take a report left by an earlier run for a new one', async () => {
    await fake('ok').train(options('again'));
    await expect(fake('no-report').train(options('again'))).rejects.toThrow(/without writing/);
  });

  it('checks the dataset, parent, hyperparameters and executable before training', async () => {
    const trainer = fake('ok');
    await expect(trainer.train(options('no-data', { dataset: directory.path }))).rejects.toThrow(
      /is not a finished training-data directory: it has no stats\.json/,
    );
    await expect(
      trainer.train(
        options('adapter-parent', {
          parent: baseGeneration({ name: 'L1', mergedPath: undefined, adapterPath: '/runs/x/L1/adapter' }),
        }),
      ),
    ).rejects.toThrow(/generation L1 has only an adapter/);
    await expect(trainer.train(options('bad-hyper', { hyper: { loraRank: 0 } }))).rejects.toThrow(
      /training hyperparameters: loraRank: /,
    );
    await expect(
      pythonTrainer({ python: join(directory.path, 'no-such-python') }).train(options('no-python')),
    ).rejects.toThrow(/the python trainer: cannot run ".*no-such-python" \(not found\)/);
  });

  it('stops the script when the signal aborts', async () => {
    const controller = new AbortController();
    const trainer = pythonTrainer({ python: process.execPath, script: join(fakes, 'sleep.mjs') });
    const training = trainer.train(options('aborted', { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('stopped by the test')), 200);
    await expect(training).rejects.toThrow('stopped by the test');
  });
});
