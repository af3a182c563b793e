import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { emptyDataset, fakes } from '../train/support.js';

// `mass train` through bin/mass.js, with the fake train_lora.py named by a run configuration's rsi.trainer.
const directory = temporaryDirectory('mass-cli-train-');
const base = join(directory.path, 'models', 'Qwen3-8B');
let dataset: string;
let config: string;

beforeAll(async () => {
  dataset = await emptyDataset(join(directory.path, 'dataset'));
  mkdirSync(base, { recursive: true });
  config = join(directory.path, 'run.yaml');
  writeFileSync(
    config,
    [
      'name: standalone',
      `suite: ${DEMO_SUITE}`,
      'roles: { executor: { model: Qwen/Qwen3-8B, baseUrl: "http://127.0.0.1:9/v1" } }',
      'rsi:',
      `  trainer: { kind: python, python: ${JSON.stringify(process.execPath)}, script: ${JSON.stringify(join(fakes, 'fake-python-trainer.mjs'))} }`,
      '  hyperparameters: { steps: 4, evalEvery: 1, checkpointEvery: 1, resumeEvery: 2 }',
      '',
    ].join('\n'),
  );
});
afterAll(() => directory.remove());

const out = (name: string) => join(directory.path, 'out', name);
const train = (name: string, ...more: string[]) => [
  'train',
  '--data',
  dataset,
  '--base',
  base,
  '--out',
  out(name),
  '--config',
  config,
  ...more,
];
const json = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;

describe('mass train', () => {
  it('trains with the configuration’s trainer and recipe, leaves the records of mass rsi, and says what it made', async () => {
    const result = await runMass(train('plain', '--steps', '3', '--seed', '5', '--processes', '2'));
    expect(result.code, result.stderr).toBe(0);
    for (const file of ['config.json', 'plan.json', 'train.log', 'report.json']) {
      expect(existsSync(join(out('plain'), file)), file).toBe(true);
    }
    expect(json(join(out('plain'), 'config.json'))).toMatchObject({
      parentModel: base,
      seed: 5,
      hyper: { steps: 3, evalEvery: 1, resumeEvery: 2, loraRank: 64 },
      initAdapter: null,
      launch: { processesPerNode: 2, nodes: 1, sharding: 'ddp', gpusPerReplica: null },
    });
    expect(result.stderr).toContain(`into ${out('plain')} (log: ${join(out('plain'), 'train.log')})`);
    expect(result.stdout).toContain(
      `Trained into ${out('plain')}: 3 steps, final validation loss 1.3000, chosen 1.1000 (step 1)`,
    );
    expect(result.stdout).toContain(`adapter: ${join(out('plain'), 'checkpoints', 'step-000001')}`);
    expect(result.stdout).toContain(`merged:  ${join(out('plain'), 'merged')}`);
    expect(result.stdout).toMatch(
      /launch: {2}python -m torch\.distributed\.run --nproc_per_node=2 .*--worker/,
    );
    expect(result.stdout).toContain(`report: ${join(out('plain'), 'report.json')}`);
  });

  it('prints the result with the report as JSON', async () => {
    const result = await runMass(train('json', '--json'));
    expect(result.code, result.stderr).toBe(0);
    const printed = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(printed).toMatchObject({
      out: out('json'),
      trainer: 'python',
      adapterPath: join(out('json'), 'checkpoints', 'step-000001'),
      mergedPath: join(out('json'), 'merged'),
      logFile: join(out('json'), 'train.log'),
      metrics: { steps: 4, supervisedTokensProcessed: 700 },
      report: {
        steps: 4,
        resumedFromStep: null,
        initAdapter: null,
        lossChunkSize: 512,
        launch: { replicas: 1 },
      },
    });
  });

  it('resumes a killed training only when told to, and starts from an adapter', async () => {
    const killed = await runMass(train('resumed'), { FAKE_TRAINER_CRASH_AT_STEP: '3' });
    expect(killed.code).toBe(3);
    expect(killed.stderr).toMatch(/mass: the python trainer exited with 1; its log is .*resumed\/train\.log/);
    const refused = await runMass(train('resumed'));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /mass: the python trainer refused: .*resume state of an earlier training \(step 2\): pass --resume/,
    );
    const resumed = await runMass(train('resumed', '--resume'));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('resumed from step 2');

    const adapter = join(out('resumed'), 'checkpoints', 'step-000001');
    const warm = await runMass(train('warm', '--init-adapter', adapter));
    expect(warm.code, warm.stderr).toBe(0);
    expect(json(join(out('warm'), 'config.json')).initAdapter).toBe(adapter);
    expect(warm.stdout).toContain(`started from the adapter ${adapter}`);
    const missing = await runMass(train('cold', '--init-adapter', join(directory.path, 'no-adapter')));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(
      /mass: --init-adapter .*no-adapter does not exist: give a PEFT adapter directory/,
    );
  });

  it('plans without training, and passes on a launch that would not fit with the settings that would', async () => {
    const planned = await runMass(train('plan', '--plan', '--gpus-per-replica', '2'));
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout).toContain(`Planned (nothing trained): ${join(out('plan'), 'plan.json')}`);
    expect(planned.stdout).toContain(
      'memory:  12.5 GiB per GPU at most of 80.0 GiB (fits); the whole estimate is in plan.json',
    );
    expect(existsSync(join(out('plan'), 'report.json'))).toBe(false);
    expect(json(join(out('plan'), 'config.json')).launch).toMatchObject({ gpusPerReplica: 2 });
    const printed = await runMass(train('plan', '--plan', '--json'));
    expect(JSON.parse(printed.stdout)).toMatchObject({ out: out('plan'), plan: { launch: { replicas: 1 } } });

    const refused = await runMass(train('too-big', '--plan'), { FAKE_TRAINER_MODE: 'refuse-plan' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /mass: the python trainer refused: the launch would not fit: .*settings that fit: --gpus-per-replica 2/,
    );
    expect(refused.stderr).toContain(join(out('too-big'), 'plan.log'));
  });

  it('names the flag or file at fault, with exit status 2 (1 for an option left out, as for every command)', async () => {
    const cases: Array<[string[], RegExp]> = [
      [
        ['train', '--data', join(directory.path, 'nowhere'), '--base', base, '--out', out('x')],
        /--data .*nowhere does not exist: give a training-data directory/,
      ],
      [
        ['train', '--data', directory.path, '--base', base, '--out', out('x')],
        /is not a finished training-data directory: it has no stats\.json/,
      ],
      [
        ['train', '--data', dataset, '--base', './no/such/model', '--out', out('x')],
        /--base .*no\/such\/model does not exist: give a model directory or a hub id/,
      ],
      [
        train('x', '--sharding', 'fsdp', '--gpus-per-replica', '2'),
        /the launch \(.*\): gpusPerReplica: fsdp shards/,
      ],
      [train('x', '--sharding', 'zero'), /--sharding "zero": use ddp .* or fsdp/],
      [train('x', '--steps', '0'), /--steps must be at least 1/],
      [train('x', '--plan', '--resume'), /--plan trains nothing, so there is nothing to --resume/],
      [['train', '--data', dataset, '--out', out('x')], /required option '--base <model>' not specified/],
    ];
    for (const [args, message] of cases) {
      const result = await runMass(args);
      expect(result.code, args.join(' ')).toBe(message.source.startsWith('required') ? 1 : 2);
      expect(result.stderr, args.join(' ')).toMatch(message);
    }
    expect(existsSync(out('x'))).toBe(false);
  });
});
