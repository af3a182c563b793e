import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TrainLaunch } from '../../src/config/train-launch.js';
import { SystemError, UserError } from '../../src/errors.js';
import { PythonTrainingReport } from '../../src/train/python-records.js';
import { pythonTrainer, type PythonTrainerOptions } from '../../src/train/python-trainer.js';
import type { TrainOptions } from '../../src/train/trainer.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { baseGeneration, emptyDataset, fakes, rejection } from './support.js';

const fakeScript = join(fakes, 'fake-python-trainer.mjs');
const directory = temporaryDirectory('mass-train-launch-');
let dataset: string;

beforeAll(async () => {
  dataset = await emptyDataset(join(directory.path, 'dataset'));
});
afterAll(() => directory.remove());

const options = (name: string, overrides: Partial<TrainOptions> = {}): TrainOptions => ({
  dataset,
  parent: baseGeneration({ mergedPath: '/models/qwen3-base' }),
  outDir: join(directory.path, name),
  seed: 7,
  hyper: { steps: 4, evalEvery: 1, checkpointEvery: 1, resumeEvery: 2 },
  ...overrides,
});

const fake = (env: Record<string, string> = {}, more: Partial<PythonTrainerOptions> = {}) =>
  pythonTrainer({ python: process.execPath, script: fakeScript, env, ...more });

interface Invocation {
  args: string[];
  config: Record<string, unknown>;
}
const invocations = (name: string): Invocation[] =>
  readFileSync(join(directory.path, name, 'invocations.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Invocation);
const config = (name: string) =>
  JSON.parse(readFileSync(join(directory.path, name, 'config.json'), 'utf8')) as Record<string, unknown>;
const report = (name: string) => PythonTrainingReport.read(join(directory.path, name, 'report.json'));

/** A PEFT adapter directory, as a checkpoint of the trainer leaves one. */
function adapter(name: string): string {
  const dir = join(directory.path, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'adapter_config.json'), JSON.stringify({ r: 64, peft_type: 'LORA' }));
  return dir;
}

describe('config.json: what the python trainer trains, from what, and how it is launched', () => {
  it('leaves every launch choice to the script by default, and holds the whole recipe', async () => {
    await fake().train(options('defaults'));
    expect(config('defaults')).toEqual({
      parentModel: '/models/qwen3-base',
      seed: 7,
      hyper: expect.objectContaining({ steps: 4, resumeEvery: 2, lossChunkSize: 512 }) as unknown,
      initAdapter: null,
      launch: {
        processesPerNode: null,
        nodes: 1,
        nodeRank: 0,
        rdzvEndpoint: null,
        gpusPerReplica: null,
        sharding: 'ddp',
        gpuMemoryGiB: null,
      },
    });
    const read = await report('defaults');
    expect(read).toMatchObject({ resumedFromStep: null, initAdapter: null, lossChunkSize: 512 });
    expect(read.launch).toMatchObject({ processesPerNode: 1, replicas: 1, device: 'cpu' });
  });

  it('carries the configured launch, the weights to train over and the adapter to start from', async () => {
    const launch = TrainLaunch.parse({
      processesPerNode: 4,
      nodes: 2,
      nodeRank: 1,
      rdzvEndpoint: '10.0.0.1:29500',
      sharding: 'fsdp',
      gpuMemoryGiB: 80,
    });
    const start = adapter('adapters/L1');
    await fake({}, { launch }).train(
      options('launched', {
        parent: baseGeneration({ name: 'L1', parent: 'L0', mergedPath: undefined, adapterPath: start }),
        base: baseGeneration({ mergedPath: '/models/L0' }),
        initAdapter: start,
      }),
    );
    expect(config('launched')).toMatchObject({
      parentModel: '/models/L0',
      initAdapter: start,
      launch: {
        processesPerNode: 4,
        nodes: 2,
        nodeRank: 1,
        rdzvEndpoint: '10.0.0.1:29500',
        gpusPerReplica: null,
        sharding: 'fsdp',
        gpuMemoryGiB: 80,
      },
    });
    const read = await report('launched');
    expect(read.initAdapter).toBe(start);
    expect(read.launch!.command).toEqual(
      expect.arrayContaining(['torch.distributed.run', '--nproc_per_node=4', '--nnodes=2', '--worker']),
    );
  });

  it('refuses an adapter to start from that is missing or not an adapter, before running anything', async () => {
    const missing = await rejection(
      fake().train(options('no-adapter', { initAdapter: join(directory.path, 'nowhere') })),
    );
    expect(missing).toBeInstanceOf(UserError);
    expect(missing.message).toMatch(/the adapter to start from .*nowhere does not exist/);
    mkdirSync(join(directory.path, 'not-an-adapter'));
    await expect(
      fake().train(options('not-adapter', { initAdapter: join(directory.path, 'not-an-adapter') })),
    ).rejects.toThrow(/is not a PEFT adapter: it has no adapter_config\.json/);
    expect(existsSync(join(directory.path, 'no-adapter'))).toBe(false);
  });
});

describe('resuming a training', () => {
  it('continues an interrupted training from its last resume state with --resume', async () => {
    const crashed = await rejection(fake({ FAKE_TRAINER_CRASH_AT_STEP: '3' }).train(options('resumed')));
    expect(crashed).toBeInstanceOf(SystemError);
    // Without --resume the script refuses the state the killed run left (exit 2: the user's to decide).
    const refused = await rejection(fake().train(options('resumed')));
    expect(refused).toBeInstanceOf(UserError);
    expect(refused.message).toMatch(
      /holds the resume state of an earlier training \(step 2\): pass --resume/,
    );

    const result = await fake().train(options('resumed', { resume: true }));
    expect(invocations('resumed').map((call) => call.args.includes('--resume'))).toEqual([
      false,
      false,
      true,
    ]);
    expect((await report('resumed')).resumedFromStep).toBe(2);
    expect(result.adapterPath).toBe(join(directory.path, 'resumed', 'checkpoints', 'step-000001'));
    expect(readFileSync(join(directory.path, 'resumed', 'train.log'), 'utf8')).toMatch(
      /step 3\/4 loss 1\.0\nstep 4\/4 loss 1\.0\n/,
    );
  });

  it('reads a finished training back instead of training it again', async () => {
    const first = await fake().train(options('finished'));
    const again = await fake().train(options('finished', { resume: true }));
    expect(again).toEqual(first);
    expect(invocations('finished')).toHaveLength(1);
    expect(readFileSync(join(directory.path, 'finished', 'train.log'), 'utf8')).toContain(
      'had finished (report.json); nothing left to train',
    );
  });

  it('refuses to resume a training of another configuration, or trains afresh when told to', async () => {
    await rejection(fake({ FAKE_TRAINER_CRASH_AT_STEP: '2' }).train(options('changed')));
    const changed = options('changed', {
      resume: true,
      hyper: { steps: 6, evalEvery: 1, checkpointEvery: 1 },
    });
    const refused = await rejection(fake().train(changed));
    expect(refused).toBeInstanceOf(UserError);
    expect(refused.message).toMatch(
      /holds a training of another configuration \(hyper\.steps: 4 then, 6 now\), which cannot be resumed/,
    );

    await fake().train({ ...changed, restartIfChanged: true });
    const calls = invocations('changed');
    // The folder was emptied: the record of the crashed call went with it, and the new one did not resume.
    expect(calls).toHaveLength(1);
    expect(calls[0]!.args).not.toContain('--resume');
    expect((await report('changed')).resumedFromStep).toBeNull();
    expect(readFileSync(join(directory.path, 'changed', 'train.log'), 'utf8')).toMatch(
      /the configuration changed since the interrupted training \(.*hyper\.steps: 4 then, 6 now\): its folder was emptied/,
    );
  });

  it('keeps the configuration of an unfinished training, against which a later --resume is checked', async () => {
    await rejection(fake({ FAKE_TRAINER_CRASH_AT_STEP: '3' }).train(options('kept')));
    const other = { hyper: { steps: 6, evalEvery: 1, checkpointEvery: 1, resumeEvery: 2 } };
    // One at a time: a refusal not yet awaited would be an unhandled rejection.
    for (const attempt of [
      () => fake().train(options('kept', other)),
      () => fake().plan(options('kept', other)),
    ]) {
      const refused = await rejection(attempt());
      expect(refused).toBeInstanceOf(UserError);
      expect(refused.message).toMatch(
        /holds an unfinished training of another configuration \(hyper\.steps: 4 then, 6 now\): resume it with the settings it started with \(--resume\)/,
      );
    }
    expect(config('kept')).toMatchObject({ hyper: { steps: 4 } });
    expect(invocations('kept')).toHaveLength(1);
    await fake().train(options('kept', { resume: true }));
    expect((await report('kept')).resumedFromStep).toBe(2);
    // Finished, it may be trained again with another configuration.
    await fake().train(options('kept', other));
    expect((await report('kept')).steps).toBe(6);
  });

  it('resumes with another launch or a smaller loss chunk, which change how it runs, not what it computes', async () => {
    await rejection(fake({ FAKE_TRAINER_CRASH_AT_STEP: '3' }).train(options('relaunched')));
    const launch = TrainLaunch.parse({ processesPerNode: 2 });
    const hyper = { ...options('relaunched').hyper, lossChunkSize: 128, gradientCheckpointing: false };
    await fake({}, { launch }).train(options('relaunched', { resume: true, hyper }));
    expect(await report('relaunched')).toMatchObject({ resumedFromStep: 2, launch: { processesPerNode: 2 } });
  });
});

describe('planning a training', () => {
  it('runs --plan and reads plan.json (schema 2) with its launch and memory estimate', async () => {
    const plan = await fake({}, { launch: TrainLaunch.parse({ processesPerNode: 2 }) }).plan(options('plan'));
    expect(invocations('plan')[0]!.args).toContain('--plan');
    expect(plan.launch).toMatchObject({ processesPerNode: 2, replicas: 2, sharding: 'ddp' });
    expect(plan.memory).toMatchObject({ fits: true });
    expect(plan.memoryNote).toBeNull();
    expect(existsSync(join(directory.path, 'plan', 'plan.log'))).toBe(true);
    expect(existsSync(join(directory.path, 'plan', 'report.json'))).toBe(false);

    const dry = await fake().dryRun(options('dry'));
    expect(invocations('dry')[0]!.args).toContain('--dry-run');
    expect(dry.memory).toBeNull();
    expect(dry.memoryNote).toMatch(/dry run/);
  });

  it("passes on the script's refusal of a launch that would not fit, with the settings it names", async () => {
    const error = await rejection(fake({ FAKE_TRAINER_MODE: 'refuse-plan' }).plan(options('too-big')));
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toMatch(
      /the python trainer refused: the launch would not fit: .*--gpus-per-replica 2/,
    );
    expect(error.message).toContain(join(directory.path, 'too-big', 'plan.log'));
  });
});
