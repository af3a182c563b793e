import { z } from 'zod';

import { durationSchema } from '../timer-duration.js';
import { TrainLaunch } from './train-launch.js';

/** How a real model's generations are trained and deployed (`mass rsi`), and the names they are served under. */

const Trainer = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('python'),
      python: z
        .string()
        .min(1)
        .optional()
        .describe(
          'a Python with src/train/python/requirements.txt; default: MASS_TRAINER_PYTHON, else the .venv-trainer/ that scripts/install-trainer.sh made, else python3',
        ),
      script: z
        .string()
        .min(1)
        .optional()
        .describe(
          'the training script; default: the bundled src/train/python/train_lora.py (a copy of your own must keep its command line and records)',
        ),
      env: z.record(z.string(), z.string()).optional(),
      launch: TrainLaunch.optional().describe(
        'processes, machines and GPUs per replica (torchrun); default: the script chooses from the GPUs it sees',
      ),
    })
    .strict(),
  z
    .object({
      kind: z.literal('command'),
      argv: z.array(z.string()).min(1).describe('program and arguments with placeholders ({train}, {out}…)'),
      cwd: z.string().optional(),
      env: z.record(z.string(), z.string()).optional(),
      adapterPath: z.string().optional().describe('where the command leaves an adapter, e.g. {out}/adapter'),
      mergedPath: z.string().optional().describe('where the command leaves merged weights'),
    })
    .strict(),
]);

/** After each deployment, before any episode of the generation: is the server really serving its weights? */
const DeploymentCheckSetting = {
  check: z
    .boolean()
    .optional()
    .describe(
      "default true: after each deployment, compare the server's log-probabilities of the trainer's probe with the trained weights'; a server that answers as the parent or as anything else stops the run",
    ),
  checkTolerance: z
    .number()
    .positive()
    .optional()
    .describe('mean |Δ log-probability| per probe token allowed; default 0.05 (bf16), 0.15 (fp8)'),
};

const Deploy = z.discriminatedUnion('kind', [
  z
    .object({ kind: z.literal('lora'), ...DeploymentCheckSetting })
    .strict()
    .describe("vLLM's runtime LoRA loading"),
  z
    .object({
      kind: z.literal('restart'),
      argv: z
        .array(z.string())
        .min(1)
        .describe(
          'restarts the server on {model_path} as {served_as}; with {base_url}, run once per replica with its address',
        ),
      timeoutSeconds: durationSchema({ unit: 's' }).default(900),
      format: z
        .enum(['bf16', 'fp8'])
        .optional()
        .describe(
          "default bf16: the merged weights as trained; fp8: exported block-wise to FP8 in the layout of Qwen's FP8 checkpoints, as the paper served them ({model_path} is the FP8 folder)",
        ),
      ...DeploymentCheckSetting,
    })
    .strict(),
]);

export const Rsi = z
  .object({
    baseModel: z
      .string()
      .min(1)
      .optional()
      .describe(
        "L0's full weights for the trainer (a model directory or hub id); default: the executor's model",
      ),
    modelDirectory: z
      .string()
      .optional()
      .describe(
        'chat template and tokenizer for the training data (tokenizer_config.json); default: the generation’s own weights directory when it holds them, else Qwen3’s for a Qwen3 model',
      ),
    allowTokenizerMismatch: z
      .boolean()
      .optional()
      .describe(
        'build training data with a tokenizer not known to be the served model’s (they share one vocabulary)',
      ),
    trainer: Trainer.optional().describe('default: python (model.kind toy: the toy trains itself)'),
    hyperparameters: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('changes to the paper’s training recipe (src/train/hyperparameters.ts)'),
    deploy: Deploy.optional().describe('default: lora (model.kind toy: mass serves each generation itself)'),
    sleepDuringTraining: z
      .boolean()
      .optional()
      .describe(
        "default false: put the executor's vLLM to sleep while a generation trains and wake it after (its /sleep and /wake_up routes: --enable-sleep-mode and VLLM_SERVER_DEV_MODE=1), so one machine can serve and train without a restart",
      ),
    lineage: z
      .enum(['merged', 'adapters'])
      .optional()
      .describe(
        "default: merged (the paper's): each generation's adapter is merged into its parent, and the next trains a fresh LoRA over those weights; adapters: every generation is one adapter over L0's weights, trained from its parent's adapter, so runtime LoRA deployment serves any number of rounds",
      ),
    servedAs: z
      .string()
      .regex(/\{generation\}/, 'must contain {generation}')
      .default('{run}-{generation}')
      .describe('the name each trained generation is served under'),
  })
  .strict();
export type Rsi = z.output<typeof Rsi>;
export type TrainerSetting = z.output<typeof Trainer>;
export type DeploySetting = z.output<typeof Deploy>;
export type Lineage = NonNullable<Rsi['lineage']>;

/** The trainer of a served model's generations: the configured one, else the Python LoRA trainer. */
export function trainerSetting(rsi: Rsi): TrainerSetting {
  return rsi.trainer ?? { kind: 'python' };
}

/** How a served model's trained generations are deployed: the configured way, else vLLM's runtime LoRA. */
export function deploySetting(rsi: Rsi): DeploySetting {
  return rsi.deploy ?? { kind: 'lora' };
}

/** How generations follow each other: the configured lineage, else the paper's (merged). */
export function lineageSetting(rsi: Rsi): Lineage {
  return rsi.lineage ?? 'merged';
}
