/* global process, console */
// Stands in for `python3 train_lora.py` in tests: same arguments, same files (config.json read; plan.json and
// report.json written at schemaVersion 2), no torch. It honours --dry-run, --plan and --resume, the configuration's
// initAdapter and launch, and keeps a resume state (resume/state.json) every hyper.resumeEvery steps until it
// finishes.
//
// FAKE_TRAINER_MODE picks what it does: ok (default), crash, refuse, missing-weights, no-report, refuse-plan (a
// launch that would not fit, with --plan). FAKE_TRAINER_CRASH_AT_STEP=<n> dies (exit 1) once step n is done, after
// saving the resume state when n is on a resumeEvery boundary. Every invocation is appended to invocations.jsonl.
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [, script, ...args] = process.argv;
const option = (name) => args[args.indexOf(name) + 1];
const flag = (name) => args.includes(name);
const out = option('--out');
const config = JSON.parse(readFileSync(option('--config'), 'utf8'));
const { hyper } = config;
writeFileSync(join(out, 'argv.json'), JSON.stringify({ script, args }));
appendFileSync(join(out, 'invocations.jsonl'), `${JSON.stringify({ args, config })}\n`);
const mode = process.env.FAKE_TRAINER_MODE ?? 'ok';
const crashAt = process.env.FAKE_TRAINER_CRASH_AT_STEP;

const refuse = (message) => {
  console.error(`error: ${message}`);
  process.exit(2);
};

console.log(`loading ${config.parentModel}`);
if (mode === 'crash') {
  console.error('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB');
  process.exit(1);
}
if (mode === 'refuse')
  refuse(`${option('--data')}/train.windows.jsonl window 3: a label differs from its input id`);
if (config.initAdapter !== null && !existsSync(join(config.initAdapter, 'adapter_config.json'))) {
  refuse(`initAdapter ${config.initAdapter} is not a PEFT adapter directory`);
}

// The launch as the script would resolve it: one process and one GPU per replica unless told otherwise, on a CPU.
const { launch } = config;
const processesPerNode = launch.processesPerNode ?? 1;
const gpusPerReplica = launch.gpusPerReplica ?? 1;
const worker = [script, '--worker', ...args];
const resolvedLaunch = {
  command:
    processesPerNode * launch.nodes > 1
      ? [
          'python',
          '-m',
          'torch.distributed.run',
          `--nproc_per_node=${processesPerNode}`,
          `--nnodes=${launch.nodes}`,
          `--node_rank=${launch.nodeRank}`,
          ...(launch.rdzvEndpoint ? [`--rdzv_endpoint=${launch.rdzvEndpoint}`] : []),
          ...worker,
        ]
      : ['python', ...worker],
  processesPerNode,
  nodes: launch.nodes,
  replicas: launch.sharding === 'fsdp' ? 1 : processesPerNode * launch.nodes,
  gpusPerReplica,
  sharding: launch.sharding,
  device: 'cpu',
};

const planning = flag('--plan');
if (planning && mode === 'refuse-plan') {
  refuse(
    'the launch would not fit: one replica needs 61.2 GiB of the 40.0 GiB a GPU has; settings that fit: ' +
      '--gpus-per-replica 2, or --sharding fsdp with --processes 2',
  );
}
const steps = Array.from({ length: hyper.steps }, (_, index) => index + 1);
const plan = {
  schemaVersion: 2,
  kind: 'python-training-plan',
  parentModel: config.parentModel,
  seed: config.seed,
  hyper,
  train: { windows: 3, supervisedTokens: 56, tasks: {} },
  validation: { windows: 2, supervisedTokens: 30 },
  drawsByRole: { orchestrator: hyper.steps, subagent: hyper.steps * (hyper.batchSize - 1), auxiliary: 0 },
  processedSupervisedTokens: 20 * hyper.steps * hyper.batchSize,
  evaluationSteps: steps.filter((step) => step % hyper.evalEvery === 0 || step === hyper.steps),
  checkpointSteps: steps.filter((step) => step % hyper.checkpointEvery === 0 || step === hyper.steps),
  learningRates: { 0: hyper.learningRate / 5 },
  draws: steps.flatMap(() => Array.from({ length: hyper.batchSize }, () => 0)),
  launch: resolvedLaunch,
  // The shape of src/train/python/memory_plan.py's estimate, in part: bytes per GPU, the GPU's, whether it fits.
  memory: planning
    ? { estimate: { total: 12.5 * 2 ** 30, perGpu: [12.5 * 2 ** 30] }, gpuMemory: 80 * 2 ** 30, fits: true }
    : null,
  memoryNote: planning ? null : 'a dry run: the memory planner runs with --plan',
};
writeFileSync(join(out, 'plan.json'), JSON.stringify(plan));
if (planning || flag('--dry-run')) process.exit(0);

const stateFile = join(out, 'resume', 'state.json');
const state = existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : null;
if (state !== null && !flag('--resume')) {
  refuse(
    `${out} holds the resume state of an earlier training (step ${state.step}): pass --resume to continue it, ` +
      'or train into an empty folder',
  );
}
const resumedFromStep = state?.step ?? null;
for (let step = (resumedFromStep ?? 0) + 1; step <= hyper.steps; step++) {
  console.log(`step ${step}/${hyper.steps} loss 1.0`);
  if (step % hyper.resumeEvery === 0) {
    mkdirSync(join(out, 'resume'), { recursive: true });
    writeFileSync(stateFile, JSON.stringify({ step }));
  }
  if (crashAt !== undefined && step === Number(crashAt)) {
    console.error(`killed after step ${step}`);
    process.exit(1);
  }
}
for (const checkpoint of ['step-000001', 'step-000002']) {
  mkdirSync(join(out, 'checkpoints', checkpoint), { recursive: true });
  writeFileSync(
    join(out, 'checkpoints', checkpoint, 'adapter_config.json'),
    JSON.stringify({ base_model_name_or_path: config.parentModel, initAdapter: config.initAdapter }),
  );
}
mkdirSync(join(out, 'merged'), { recursive: true });
if (mode !== 'no-report') {
  const report = {
    schemaVersion: 2,
    kind: 'python-training-report',
    steps: hyper.steps,
    supervisedTokensProcessed: 700,
    trainLoss: [
      { step: 1, loss: 1.5, learningRate: 3e-5 },
      { step: 2, loss: 1.2, learningRate: 3e-6 },
    ],
    validationLoss: [
      { step: 1, loss: 1.1 },
      { step: 2, loss: 1.3 },
    ],
    checkpoints: [
      { step: 1, path: 'checkpoints/step-000001', validationLoss: 1.1 },
      { step: 2, path: 'checkpoints/step-000002', validationLoss: 1.3 },
    ],
    chosenCheckpoint: { step: 1, path: 'checkpoints/step-000001', validationLoss: 1.1 },
    adapterPath: mode === 'missing-weights' ? 'checkpoints/step-999999' : 'checkpoints/step-000001',
    mergedPath: hyper.mergeIntoParent ? 'merged' : null,
    seconds: 0.1,
    versions: { python: 'fake' },
    launch: resolvedLaunch,
    resumedFromStep,
    initAdapter: config.initAdapter,
    lossChunkSize: hyper.lossChunkSize,
    linearAttentionKernels: null,
  };
  writeFileSync(join(out, 'report.json'), JSON.stringify(report));
  // Finished: no state is left to resume from.
  rmSync(join(out, 'resume'), { recursive: true, force: true });
}
