import { z } from 'zod';

import { defineRecord } from '../store/record.js';
import { TrainingHyperparameters } from './hyperparameters.js';

const Count = z.number().int().nonnegative();
const Positive = z.number().int().positive();
const Loss = z.number().nonnegative();

/**
 * How `python/train_lora.py` launched (or would launch) the training, as it resolved `config.json`'s `launch`: the
 * exact command that trains (torchrun and the script's worker, or the script alone), processes, replicas and the
 * device.
 */
export const ResolvedLaunch = z.object({
  /** The argv that trains, e.g. `[python, -m, torch.distributed.run, --nproc_per_node=2, …, train_lora.py, --worker, …]`. */
  command: z.array(z.string()).min(1),
  processesPerNode: Positive,
  nodes: Positive,
  /** Data-parallel replicas over all nodes; each holds the whole model (ddp) or a shard group (fsdp). */
  replicas: Positive,
  gpusPerReplica: Positive,
  sharding: z.enum(['ddp', 'fsdp']),
  device: z.enum(['cuda', 'cpu']),
});
export type ResolvedLaunch = z.infer<typeof ResolvedLaunch>;

/**
 * `report.json`, written by `python/train_lora.py` when training finished; paths relative to its directory.
 * Version 2 adds the launch, the step a resumed training continued from, the adapter it started from, the loss's chunk
 * size and the linear-attention kernels; a version-1 report reads with those as null.
 */
export const PythonTrainingReport = defineRecord({
  kind: 'python-training-report',
  version: 2,
  schema: z.object({
    steps: Count,
    supervisedTokensProcessed: Count,
    trainLoss: z.array(z.object({ step: Count, loss: Loss, learningRate: z.number().nonnegative() })),
    validationLoss: z.array(z.object({ step: Count, loss: Loss })),
    checkpoints: z.array(z.object({ step: Count, path: z.string().min(1), validationLoss: Loss })),
    chosenCheckpoint: z.object({ step: Count, path: z.string().min(1), validationLoss: Loss }),
    adapterPath: z.string().min(1),
    mergedPath: z.string().min(1).nullable(),
    seconds: z.number().nonnegative(),
    versions: z.record(z.string(), z.string()),
    /** The transformers class the parent was loaded (and the merged model saved) as; absent in older reports. */
    modelClass: z.string().optional(),
    /** How many linear layers got LoRA, by the last part of their name (`q_proj`, `in_proj_qkv`…). */
    loraTargets: z.record(z.string(), Count).optional(),
    /** Null in a version-1 report (written before launches were recorded). */
    launch: ResolvedLaunch.nullable(),
    /** The step the training continued from (`--resume`); null when it started at step 0. */
    resumedFromStep: Count.nullable(),
    /** The adapter the LoRA started from (`initAdapter`), as given; null for a fresh LoRA. */
    initAdapter: z.string().min(1).nullable(),
    /** Labelled positions per chunk of the cross-entropy; null in a version-1 report (no chunking). */
    lossChunkSize: Positive.nullable(),
    /** Qwen3.5/3.6 linear attention: flash-linear-attention's kernels or PyTorch's; null for a model without it. */
    linearAttentionKernels: z.enum(['fla', 'torch']).nullable(),
    /** torch.cuda.max_memory_allocated() of process 0 over the training; null on a CPU, absent in older reports. */
    peakGpuMemoryBytes: z.number().int().nonnegative().nullable().optional(),
    /** The deployment check's probe (probe.json); absent in reports written before the check existed. */
    probe: z.string().min(1).optional(),
    /** The largest change of a probe token's log-probability from the parent to the trained generation. */
    probeGenerationChange: z.number().nonnegative().optional(),
  }),
  migrate: (body) => ({
    ...body,
    launch: null,
    resumedFromStep: null,
    initAdapter: null,
    lossChunkSize: null,
    linearAttentionKernels: null,
  }),
});
export type PythonTrainingReport = z.infer<(typeof PythonTrainingReport)['schema']>;

/**
 * `plan.json`, written by `python/train_lora.py` before training (and alone with `--dry-run` or `--plan`). Version 2
 * adds the launch and the memory planner's estimate (`--plan`); a version-1 plan reads with both null.
 */
export const PythonTrainingPlan = defineRecord({
  kind: 'python-training-plan',
  version: 2,
  schema: z.object({
    parentModel: z.string(),
    seed: Count,
    hyper: TrainingHyperparameters,
    train: z.object({
      windows: Count,
      supervisedTokens: Count,
      tasks: z.record(
        z.string(),
        z.object({
          orchestratorWindows: Count,
          otherWindows: Count,
          orchestratorChance: z.number().min(0).max(1),
        }),
      ),
    }),
    validation: z.object({ windows: Count, supervisedTokens: Count }),
    drawsByRole: z.record(z.string(), Count),
    processedSupervisedTokens: Count,
    evaluationSteps: z.array(Count),
    checkpointSteps: z.array(Count),
    /** The learning rate at a few 0-based steps (first, end of warm-up, middle, last). */
    learningRates: z.record(z.string(), z.number().nonnegative()),
    /** Every window drawn, in order: `batchSize` per step. */
    draws: z.array(Count),
    /** How the training would be launched; null in a version-1 plan. */
    launch: ResolvedLaunch.nullable(),
    /** The memory planner's estimate (`--plan`, with torch), as the script writes it; null without one. */
    memory: z.looseObject({}).nullable(),
    /** Why `memory` is null (a dry run, no torch, a version-1 plan); null when there is an estimate. */
    memoryNote: z.string().nullable(),
  }),
  migrate: (body) => ({
    ...body,
    launch: null,
    memory: null,
    memoryNote: 'planned by an older train_lora.py (plan schemaVersion 1), without a memory planner',
  }),
});
export type PythonTrainingPlan = z.infer<(typeof PythonTrainingPlan)['schema']>;
