import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SystemError, UserError } from '../../src/errors.js';
import { commandTrainer } from '../../src/train/command-trainer.js';
import type { TrainOptions } from '../../src/train/trainer.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { baseGeneration, emptyDataset, fakes, rejection } from './support.js';

const fakeCommand = join(fakes, 'fake-trainer-command.mjs');
const directory = temporaryDirectory('mass-train-command-');
let dataset: string;

beforeAll(async () => {
  dataset = await emptyDataset(join(directory.path, 'dataset'));
});
afterAll(() => directory.remove());

const options = (name: string): TrainOptions => ({
  dataset,
  parent: baseGeneration({ mergedPath: '/models/parent weights' }),
  outDir: join(directory.path, name),
  seed: 42,
  hyper: { steps: 3, learningRate: 1e-4 },
});

const argv = [
  process.execPath,
  fakeCommand,
  '--train',
  '{train}',
  '--validation={validation}',
  '--conversations',
  '{conversations}',
  '--model',
  '{base_model}',
  '--out',
  '{out}',
  '--seed',
  '{seed}',
  '--config',
  '{config}',
  '--lr',
  '{learning_rate}',
  '--steps',
  '{steps}',
  'literal; echo not a shell {"json": true}',
];

describe('an external training command', () => {
  it('gets every placeholder filled, one argument each, without a shell, and its printed result read back', async () => {
    const result = await commandTrainer({ argv }).train(options('printed'));
    const out = join(directory.path, 'printed');

    const received = JSON.parse(readFileSync(join(out, 'args.json'), 'utf8')) as string[];
    expect(received).toEqual([
      '--train',
      join(dataset, 'train.windows.jsonl'),
      `--validation=${join(dataset, 'validation.windows.jsonl')}`,
      '--conversations',
      join(dataset, 'train.conversations.jsonl'),
      '--model',
      '/models/parent weights',
      '--out',
      out,
      '--seed',
      '42',
      '--config',
      join(out, 'config.json'),
      '--lr',
      '0.0001',
      '--steps',
      '3',
      'literal; echo not a shell {"json": true}',
    ]);
    const config = JSON.parse(readFileSync(join(out, 'config.json'), 'utf8')) as {
      hyper: Record<string, unknown>;
    };
    expect(config.hyper).toMatchObject({ steps: 3, learningRate: 1e-4, loraRank: 64 });

    expect(result.adapterPath).toBe(join(out, 'adapter'));
    expect(result.mergedPath).toBeUndefined();
    expect(result.metrics).toMatchObject({
      steps: 3,
      supervisedTokensProcessed: 99,
      trainLoss: [{ step: 3, loss: 0.5 }],
      chosenCheckpoint: null,
    });
    expect(result.logFile).toBe(join(out, 'train.log'));
    const log = readFileSync(result.logFile, 'utf8');
    expect(log).toContain("--model '/models/parent weights'");
    expect(log).toContain('{"progress": 0.5}\n');
    expect(log).toMatch(/\ndone\n.*exit 0\n$/);
  });

  it('takes a declared output path instead of a printed line, and keeps secrets out of the log', async () => {
    const trainer = commandTrainer({
      argv,
      adapterPath: '{out}/adapter',
      env: { FAKE_COMMAND_MODE: 'silent', FAKE_HUB_TOKEN: 'hf_secret_123' },
      secrets: ['hf_secret_123'],
    });
    const result = await trainer.train(options('declared'));
    expect(result.adapterPath).toBe(join(directory.path, 'declared', 'adapter'));
    expect(result.metrics.steps).toBeNull();
    const log = readFileSync(result.logFile, 'utf8');
    expect(log).toContain('training with token ***');
    expect(log).not.toContain('hf_secret_123');
  });

  it('is given the weights to train over and the adapter to start from, and must be able to take the adapter', async () => {
    const start = join(directory.path, 'adapters', 'L1');
    mkdirSync(start, { recursive: true });
    writeFileSync(join(start, 'adapter_config.json'), '{"r": 64}');
    const warm: TrainOptions = {
      ...options('warm'),
      parent: baseGeneration({ name: 'L1', parent: 'L0', mergedPath: undefined, adapterPath: start }),
      base: baseGeneration({ mergedPath: '/models/L0' }),
      initAdapter: start,
    };
    await commandTrainer({ argv: [...argv, '--init', '{init_adapter}'] }).train(warm);
    const received = JSON.parse(readFileSync(join(directory.path, 'warm', 'args.json'), 'utf8')) as string[];
    expect(received.slice(received.indexOf('--model'), received.indexOf('--model') + 2)).toEqual([
      '--model',
      '/models/L0',
    ]);
    expect(received.slice(-2)).toEqual(['--init', start]);
    expect(JSON.parse(readFileSync(join(directory.path, 'warm', 'config.json'), 'utf8'))).toMatchObject({
      parentModel: '/models/L0',
      initAdapter: start,
    });

    const deaf = ['trainer', '--out', '{out}'];
    await expect(
      commandTrainer({ argv: deaf }).train({ ...warm, outDir: join(directory.path, 'deaf') }),
    ).rejects.toThrow(
      /is to start from the adapter .*adapters\/L1, but its argv names neither \{init_adapter\} nor \{config\}/,
    );
  });

  it('refuses unknown placeholders when it is made', () => {
    expect(() => commandTrainer({ argv: ['axolotl', 'train', '{dataset_dir}'] })).toThrow(
      /argument 2 \("\{dataset_dir\}"\) has the unknown placeholder \{dataset_dir\}; known: \{dataset\}/,
    );
    expect(() => commandTrainer({ argv: ['x'], mergedPath: '{output}/merged' })).toThrow(
      /mergedPath: .*unknown placeholder \{output\}/,
    );
    expect(() => commandTrainer({ argv: [] })).toThrow(UserError);
  });

  it('names the log when the command fails, says nothing, prints a broken line or a missing path', async () => {
    const run = (mode: string) =>
      rejection(commandTrainer({ argv, env: { FAKE_COMMAND_MODE: mode } }).train(options(mode)));
    const log = (mode: string) => join(directory.path, mode, 'train.log');

    const failed = await run('fail');
    expect(failed).toBeInstanceOf(SystemError);
    expect(failed.message).toContain(`exited with 3; its log is ${log('fail')}`);
    expect(failed.message).toContain('ValueError: unknown dataset format');

    const silent = await run('silent');
    expect(silent).toBeInstanceOf(UserError);
    expect(silent.message).toMatch(/did not say where its weights are: declare adapterPath or mergedPath/);
    expect(silent.message).toContain(log('silent'));

    expect((await run('broken')).message).toMatch(
      /stdout line 3 \(log: .*broken\/train\.log\) is not valid JSON/,
    );
    expect((await run('missing')).message).toMatch(/its weights .*missing\/nowhere do not exist/);
  });

  it('runs a shell script when the user asks for one', async () => {
    const script = 'mkdir -p "$1/merged" && echo "{\\"mergedPath\\": \\"merged\\"}"';
    const result = await commandTrainer({ argv: ['sh', '-c', script, 'sh', '{out}'] }).train(options('sh'));
    expect(result.mergedPath).toBe(join(directory.path, 'sh', 'merged'));
  });
});
