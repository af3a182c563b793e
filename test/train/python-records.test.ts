import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { resolveHyperparameters } from '../../src/train/hyperparameters.js';
import { PythonTrainingPlan, PythonTrainingReport } from '../../src/train/python-records.js';
import { temporaryDirectory } from '../support/fixtures.js';

const directory = temporaryDirectory('mass-python-records-');
afterAll(() => directory.remove());

function file(name: string, record: object): string {
  const path = join(directory.path, name);
  writeFileSync(path, JSON.stringify(record));
  return path;
}

const reportV1 = {
  schemaVersion: 1,
  kind: 'python-training-report',
  steps: 2,
  supervisedTokensProcessed: 700,
  trainLoss: [{ step: 1, loss: 1.5, learningRate: 3e-5 }],
  validationLoss: [{ step: 2, loss: 1.1 }],
  checkpoints: [{ step: 2, path: 'checkpoints/step-000002', validationLoss: 1.1 }],
  chosenCheckpoint: { step: 2, path: 'checkpoints/step-000002', validationLoss: 1.1 },
  adapterPath: 'checkpoints/step-000002',
  mergedPath: 'merged',
  seconds: 12.5,
  versions: { torch: '2.9.0' },
};

const launch = {
  command: ['python', '-m', 'torch.distributed.run', '--nproc_per_node=2', 'train_lora.py', '--worker'],
  processesPerNode: 2,
  nodes: 1,
  replicas: 2,
  gpusPerReplica: 1,
  sharding: 'ddp',
  device: 'cuda',
};

const planV1 = {
  schemaVersion: 1,
  kind: 'python-training-plan',
  parentModel: '/models/qwen3',
  seed: 3,
  // A plan of an older script: its recipe had neither lossChunkSize nor resumeEvery.
  hyper: (({ lossChunkSize: _chunk, resumeEvery: _every, ...rest }) => rest)(resolveHyperparameters()),
  train: { windows: 3, supervisedTokens: 56, tasks: {} },
  validation: { windows: 1, supervisedTokens: 10 },
  drawsByRole: { orchestrator: 1, subagent: 2 },
  processedSupervisedTokens: 40,
  evaluationSteps: [150],
  checkpointSteps: [150],
  learningRates: { '0': 6e-6 },
  draws: [0, 1, 2],
};

describe('the python trainer’s records', () => {
  it('read a version-1 report with the new fields null', async () => {
    const report = await PythonTrainingReport.read(file('report-v1.json', reportV1));
    expect(report).toMatchObject({
      steps: 2,
      adapterPath: 'checkpoints/step-000002',
      launch: null,
      resumedFromStep: null,
      initAdapter: null,
      lossChunkSize: null,
      linearAttentionKernels: null,
    });
  });

  it('read a version-2 report with its launch, resume step, starting adapter, chunk size and kernels', async () => {
    const report = await PythonTrainingReport.read(
      file('report-v2.json', {
        ...reportV1,
        schemaVersion: 2,
        launch,
        resumedFromStep: 100,
        initAdapter: '/runs/r/train/L1/checkpoints/step-000150',
        lossChunkSize: 512,
        linearAttentionKernels: 'fla',
      }),
    );
    expect(report).toMatchObject({
      launch,
      resumedFromStep: 100,
      lossChunkSize: 512,
      linearAttentionKernels: 'fla',
    });
    await expect(
      PythonTrainingReport.read(file('report-v2-bad.json', { ...reportV1, schemaVersion: 2, launch })),
    ).rejects.toThrow(/resumedFromStep: /);
  });

  it('read a version-1 plan with no launch and no memory estimate, saying why', async () => {
    const plan = await PythonTrainingPlan.read(file('plan-v1.json', planV1));
    expect(plan.launch).toBeNull();
    expect(plan.memory).toBeNull();
    expect(plan.memoryNote).toMatch(/older train_lora\.py/);
    expect(plan.hyper).toMatchObject({ lossChunkSize: 512, resumeEvery: 50 });
  });

  it('read a version-2 plan with the launch and the planner’s estimate as written', async () => {
    const memory = { fits: true, perGpuGiB: 61.5, parts: { weights: 54.1, activations: 6.2 } };
    const plan = await PythonTrainingPlan.read(
      file('plan-v2.json', {
        ...planV1,
        schemaVersion: 2,
        hyper: resolveHyperparameters(),
        launch,
        memory,
        memoryNote: null,
      }),
    );
    expect(plan).toMatchObject({ launch, memory, memoryNote: null });
  });
});
