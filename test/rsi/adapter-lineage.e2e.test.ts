import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseRunConfig, RunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { SystemError } from '../../src/errors.js';
import { modelKind, trainerFromSetting } from '../../src/hosting/model-kind.js';
import { trainGeneration } from '../../src/rsi/run-generations.js';
import { openRun, type Run } from '../../src/store/run-store.js';
import { PythonTrainingReport } from '../../src/train/python-records.js';
import { ModelRegistry } from '../../src/records/registry.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { startFakeVllm, type FakeVllm } from '../train/fake-vllm.js';
import { emptyDataset, fakes, rejection } from '../train/support.js';

// The training and deployment stages of `mass rsi` (src/rsi/run-generations.ts), round after round, on a served
// model: the real train step, registry, served host and python back-end, with the fake train_lora.py and a fake vLLM
// in place of the GPU. The search and distillation stages are left out: each round's data is an empty dataset.

const BASE = 'Qwen/Qwen3-8B';
const fakeScript = join(fakes, 'fake-python-trainer.mjs');
const directory = temporaryDirectory('mass-rsi-adapters-');
let server: FakeVllm;
let baseModel: string;

beforeAll(async () => {
  server = await startFakeVllm({ models: [BASE], runtimeLora: true });
  baseModel = join(directory.path, 'models', 'Qwen3-8B');
  mkdirSync(baseModel, { recursive: true });
  writeFileSync(join(baseModel, 'config.json'), JSON.stringify({ model_type: 'qwen3' }));
});
afterAll(async () => {
  await server.close();
  directory.remove();
});

function openAdapterRun(name: string, trainerEnv: Record<string, string> = {}): Run<RunConfig> {
  const config = parseRunConfig(
    {
      name,
      suite: DEMO_SUITE,
      tasks: ['demo-volatility'],
      roles: { executor: { baseUrl: server.baseUrl, model: BASE } },
      rsi: {
        baseModel,
        lineage: 'adapters',
        deploy: { kind: 'lora' },
        trainer: { kind: 'python', python: process.execPath, script: fakeScript, env: trainerEnv },
        hyperparameters: {
          steps: 4,
          evalEvery: 1,
          checkpointEvery: 1,
          resumeEvery: 2,
          mergeIntoParent: false,
        },
        servedAs: '{run}-{generation}',
      },
    },
    `${name}.yaml`,
  );
  return openRun({ runsDirectory: join(directory.path, 'runs'), name, configSchema: RunConfig, config });
}

async function registryWithBase(run: Run<RunConfig>): Promise<ModelRegistry> {
  const registry = await ModelRegistry.open(run.directory);
  if (!registry.get('L0')) {
    await registry.addBase({
      model: await modelKind(run.config).host.baseWeights(run.directory),
      servedAs: BASE,
    });
  }
  return registry;
}

const trainingConfig = (run: Run<RunConfig>, generation: string) =>
  JSON.parse(readFileSync(run.path('train', generation, 'config.json'), 'utf8')) as {
    parentModel: string;
    initAdapter: string | null;
  };
const loraCalls = () =>
  server.requests
    .filter((request) => request.path.endsWith('_lora_adapter'))
    .map((request) => `${request.path.slice(4)} ${JSON.stringify(request.body)}`);

describe('three rounds with every generation an adapter over the base (lineage adapters, deploy lora)', () => {
  it('trains each generation over L0 from its parent’s adapter, serves it over the one base, and unloads the one before', async () => {
    const run = openAdapterRun('adapters');
    try {
      const { host, trainer } = (() => {
        const kind = modelKind(run.config);
        return { host: kind.host, trainer: kind.trainer() };
      })();
      expect(() => host.checkRounds(3)).not.toThrow();
      const registry = await registryWithBase(run);
      // As runGenerations does: each round serves its generation, then trains the next; the last is served at the end.
      for (let round = 0; round < 3; round++) {
        const generation = registry.require(`L${round}`);
        await (await host.serve(generation, registry, run.directory)).close();
        const dataset = await emptyDataset(run.path('distill', `L${round}`, 'dataset'));
        const trained = await trainGeneration({ run, registry, trainer, parent: generation, dataset, round });
        expect(trained.generation).toMatchObject({
          name: `L${round + 1}`,
          parent: `L${round}`,
          adapterBase: 'L0',
        });
      }
      const last = registry.require('L3');
      await (await host.serve(last, registry, run.directory)).close();

      const adapterOf = (name: string) => registry.require(name).adapterPath!;
      for (const [generation, initAdapter] of [
        ['L1', null],
        ['L2', adapterOf('L1')],
        ['L3', adapterOf('L2')],
      ] as const) {
        expect(trainingConfig(run, generation), generation).toMatchObject({
          parentModel: baseModel,
          initAdapter,
        });
        const report = await PythonTrainingReport.read(run.path('train', generation, 'report.json'));
        expect(report.initAdapter).toBe(initAdapter);
      }
      expect(registry.list().map((generation) => generation.mergedPath)).toEqual([
        baseModel,
        undefined,
        undefined,
        undefined,
      ]);

      expect(loraCalls()).toEqual([
        `load_lora_adapter {"lora_name":"adapters-L1","lora_path":"${adapterOf('L1')}"}`,
        `load_lora_adapter {"lora_name":"adapters-L2","lora_path":"${adapterOf('L2')}"}`,
        'unload_lora_adapter {"lora_name":"adapters-L1"}',
        `load_lora_adapter {"lora_name":"adapters-L3","lora_path":"${adapterOf('L3')}"}`,
        'unload_lora_adapter {"lora_name":"adapters-L2"}',
      ]);
      expect(server.models()).toEqual([
        { id: BASE, root: `/models/${BASE}`, parent: null },
        { id: 'adapters-L3', root: adapterOf('L3'), parent: BASE },
      ]);

      // Run again (a resumed run): every step is done, and nothing is trained, loaded or unloaded again.
      const calls = loraCalls().length;
      const again = await trainGeneration({
        run,
        registry,
        trainer,
        parent: registry.require('L2'),
        dataset: run.path('distill', 'L2', 'dataset'),
        round: 2,
      });
      expect(again.generation).toEqual(last);
      await (await host.serve(last, registry, run.directory)).close();
      expect(loraCalls()).toHaveLength(calls);
      expect(run.listSteps({ prefix: 'rsi/' }).map((step) => [step.key, step.attempts])).toEqual([
        ['rsi/L1/train', 1],
        ['rsi/L2/train', 1],
        ['rsi/L3/train', 1],
      ]);

      // An evaluation reaching L1 loads its adapter again over the base; L3 is served already.
      const reached = await host.reach(registry.require('L1'), registry);
      expect(reached.endpoints.executor).toMatchObject({ baseUrl: server.baseUrl, model: 'adapters-L1' });
      await host.reach(last, registry);
      expect(loraCalls().slice(calls)).toEqual([
        `load_lora_adapter {"lora_name":"adapters-L1","lora_path":"${adapterOf('L1')}"}`,
      ]);
      expect(server.models().map((model) => [model.id, model.parent])).toEqual([
        [BASE, null],
        ['adapters-L3', BASE],
        ['adapters-L1', BASE],
      ]);
    } finally {
      run.close();
    }
  });
});

describe('the training step of mass rsi', () => {
  it('resumes a training killed midway from its last resume state when the step is redone', async () => {
    const run = openAdapterRun('resumed');
    try {
      const registry = await registryWithBase(run);
      const dataset = await emptyDataset(run.path('distill', 'L0', 'dataset'));
      const setting = run.config.rsi.trainer!;
      const killed = trainerFromSetting({ ...setting, env: { FAKE_TRAINER_CRASH_AT_STEP: '3' } });
      const parent = registry.require('L0');
      const error = await rejection(
        trainGeneration({ run, registry, trainer: killed, parent, dataset, round: 0 }),
      );
      expect(error).toBeInstanceOf(SystemError);
      expect(run.getStep('rsi/L1/train')).toMatchObject({ status: 'failed', attempts: 1 });

      const trained = await trainGeneration({
        run,
        registry,
        trainer: modelKind(run.config).trainer(),
        parent,
        dataset,
        round: 0,
      });
      const invocations = readFileSync(run.path('train', 'L1', 'invocations.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { args: string[] }).args);
      expect(invocations.map((args) => args.includes('--resume'))).toEqual([false, true]);
      expect((await PythonTrainingReport.read(run.path('train', 'L1', 'report.json'))).resumedFromStep).toBe(
        2,
      );
      expect(run.getStep('rsi/L1/train')).toMatchObject({ status: 'done', attempts: 2 });
      expect(trained.generation).toMatchObject({ name: 'L1', adapterBase: 'L0' });
    } finally {
      run.close();
    }
  });
});
