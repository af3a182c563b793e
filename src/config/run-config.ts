import { readFile } from 'node:fs/promises';

import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

import { UserError } from '../errors.js';

/**
 * The one configuration file of a run (`mass search --config`, later `mass rsi`): endpoints and model per role,
 * sampling, budgets, concurrency, seeds, tasks, judge mode and champion rule. Every field has the paper's default;
 * the same model plays every role unless a role names another (the paper's ablations swap one role's model).
 */

const Endpoint = z
  .object({
    provider: z
      .enum(['openai-compatible', 'anthropic', 'toy'])
      .default('openai-compatible')
      .describe('toy: the built-in rule-based toy model, started by mass itself (the demo)'),
    baseUrl: z.string().url().describe('OpenAI style, ending in /v1 (for anthropic: optional)').optional(),
    model: z.string().min(1),
    apiKeyEnv: z
      .string()
      .min(1)
      .optional()
      .describe('the environment variable holding the key; never the key'),
    maxConcurrency: z.number().int().positive().default(64),
  })
  .strict();
export type Endpoint = z.infer<typeof Endpoint>;

const Sampling = z
  .object({
    temperature: z.number().min(0).max(2).default(0.6),
    topP: z.number().gt(0).max(1).default(0.95),
    topK: z.number().int().default(20),
    enableThinking: z.boolean().default(true),
  })
  .strict();

const Trainer = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('toy') }).strict(),
  z
    .object({
      kind: z.literal('python'),
      python: z
        .string()
        .min(1)
        .default('python3')
        .describe('a Python with src/train/python/requirements.txt'),
      env: z.record(z.string(), z.string()).optional(),
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

const Deploy = z.discriminatedUnion('kind', [
  z
    .object({ kind: z.literal('lora') })
    .strict()
    .describe("vLLM's runtime LoRA loading"),
  z
    .object({
      kind: z.literal('restart'),
      argv: z.array(z.string()).min(1).describe('restarts the server on {model_path} as {served_as}'),
      timeoutSeconds: z.number().positive().default(900),
    })
    .strict(),
  z
    .object({ kind: z.literal('toy') })
    .strict()
    .describe('the toy model, served by mass itself'),
]);

const Rsi = z
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
      .describe('chat template and tokenizer for the training data (tokenizer_config.json); default Qwen3'),
    trainer: Trainer.default({ kind: 'python', python: 'python3' }),
    hyperparameters: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('changes to the paper’s training recipe (src/train/hyperparameters.ts)'),
    deploy: Deploy.default({ kind: 'lora' }),
    servedAs: z
      .string()
      .regex(/\{generation\}/, 'must contain {generation}')
      .default('{run}-{generation}')
      .describe('the name each trained generation is served under'),
  })
  .strict();

/** What a task's generator accepts as `--seed`. */
const DataSeed = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);

export const RunConfig = z
  .object({
    $schema: z.string().optional(),
    name: z.string().regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" and "-"'),
    suite: z.string().min(1).describe('the task suite folder, e.g. suites/research-12'),
    tasks: z
      .array(z.string().min(1))
      .optional()
      .describe('task ids to use; default: every train task of the suite'),
    roles: z
      .object({
        executor: Endpoint,
        judge: Endpoint.optional().describe('default: the executor'),
        optimizer: Endpoint.optional().describe('default: the executor'),
      })
      .strict(),
    sampling: Sampling.default({ temperature: 0.6, topP: 0.95, topK: 20, enableThinking: true }),
    budgets: z
      .object({
        episodeTimeoutSeconds: z.number().positive().default(3600),
        maxOutputTokensPerCall: z.number().int().positive().default(32_768),
        episodeOutputBudget: z.number().int().positive().optional(),
        judgeMaxTokens: z.number().int().positive().default(49_152),
        optimizerMaxTokens: z.number().int().positive().default(49_152),
        contextWindowSize: z.number().int().positive().default(262_144),
      })
      .strict()
      .default({
        episodeTimeoutSeconds: 3600,
        maxOutputTokensPerCall: 32_768,
        judgeMaxTokens: 49_152,
        optimizerMaxTokens: 49_152,
        contextWindowSize: 262_144,
      }),
    concurrency: z
      .object({
        episodes: z.number().int().positive().default(4),
        judgments: z.number().int().positive().default(8),
        tasks: z.number().int().positive().default(4),
      })
      .strict()
      .default({ episodes: 4, judgments: 8, tasks: 4 }),
    seed: z
      .number()
      .int()
      .nonnegative()
      .default(0)
      .describe('sampling: run i of a task samples with seed + i; schedules and judge orders draw from it'),
    dataSeed: DataSeed.optional().describe(
      "every task's data (generator and grader), the same in every episode of the run; default: seed",
    ),
    taskDataSeeds: z
      .record(z.string(), DataSeed)
      .optional()
      .describe('a data seed of its own for a task id, in place of dataSeed'),
    search: z
      .object({
        iterations: z.number().int().min(0).default(11),
        championRule: z.enum(['paper', 'official']).default('paper'),
        judgeMode: z.enum(['random', 'both']).default('random'),
        judgeRepairAttempts: z.number().int().min(0).default(2),
        optimizerRepairAttempts: z.number().int().min(0).default(2),
        stabiliser: z
          .object({
            initialMaxChange: z
              .number()
              .gt(0)
              .max(1)
              .describe('largest fraction of the design changed at iteration 1'),
            decay: z.number().gt(0).max(1).describe('multiplied into the bound at each iteration'),
          })
          .strict()
          .optional()
          .describe(
            'bounds how much of the design may change per iteration, decaying: a learning-rate schedule',
          ),
      })
      .strict()
      .default({
        iterations: 11,
        championRule: 'paper',
        judgeMode: 'random',
        judgeRepairAttempts: 2,
        optimizerRepairAttempts: 2,
      }),
    sandbox: z.enum(['bubblewrap', 'unsandboxed']).default('bubblewrap'),
    rsi: Rsi.default({
      trainer: { kind: 'python', python: 'python3' },
      deploy: { kind: 'lora' },
      servedAs: '{run}-{generation}',
    }).describe('generations (mass rsi): training, deployment and served names'),
    distill: z
      .object({
        runs: z
          .number()
          .int()
          .positive()
          .default(18)
          .describe('champion runs per task, each with its own seed'),
        needed: z
          .number()
          .int()
          .positive()
          .default(16)
          .describe('successful runs selection needs; fewer start bounded top-up runs'),
        maxTopUps: z.number().int().min(0).default(6).describe('extra runs per task at most'),
        schedule: z.enum(['ring', 'round-robin', 'adaptive']).default('ring'),
        ringOpponents: z.number().int().min(2).default(6).describe('opponents per episode in the ring'),
        adaptive: z
          .object({
            initialOpponents: z.number().int().min(2).default(4).describe('the ring played first'),
            rounds: z.number().int().min(0).default(3),
            batchSize: z.number().int().positive().default(6).describe('pairs per round at most'),
            window: z.number().int().positive().default(6).describe('players on each side of the cut'),
            maxMeetings: z.number().int().positive().default(2).describe('judgments of one pair at most'),
          })
          .strict()
          .default({ initialOpponents: 4, rounds: 3, batchSize: 6, window: 6, maxMeetings: 2 })
          .describe('used by schedule: adaptive; the defaults spend the ring’s 54 judgments for 18 episodes'),
        judgeMode: z.enum(['random', 'both']).default('random'),
        judgeRepairAttempts: z.number().int().min(0).default(2),
        prior: z.number().gt(0).default(0.5).describe('Bradley–Terry virtual wins and losses per episode'),
        train: z.number().int().positive().default(15).describe('ranks 1..train are trained on'),
        validation: z.number().int().min(0).default(1).describe('the next ranks are for validation'),
        windowTokens: z.number().int().positive().default(49_152),
        maxContextTokens: z.number().int().min(0).default(8_192),
      })
      .strict()
      .default({
        runs: 18,
        needed: 16,
        maxTopUps: 6,
        schedule: 'ring',
        ringOpponents: 6,
        adaptive: { initialOpponents: 4, rounds: 3, batchSize: 6, window: 6, maxMeetings: 2 },
        judgeMode: 'random',
        judgeRepairAttempts: 2,
        prior: 0.5,
        train: 15,
        validation: 1,
        windowTokens: 49_152,
        maxContextTokens: 8_192,
      })
      .describe('the outer loop: champion runs, tournament, Bradley–Terry, selection, training windows'),
  })
  .strict()
  .superRefine((config, context) => {
    const toy = config.roles.executor.provider === 'toy';
    if (toy !== (config.rsi.trainer.kind === 'toy')) {
      context.addIssue({
        code: 'custom',
        path: ['rsi', 'trainer', 'kind'],
        message: toy
          ? 'the toy model is trained by the toy trainer: set rsi.trainer.kind: toy'
          : 'the toy trainer trains only the toy model: set roles.executor.provider: toy, or choose python or command',
      });
    }
    if (toy && config.rsi.deploy.kind !== 'toy') {
      context.addIssue({
        code: 'custom',
        path: ['rsi', 'deploy', 'kind'],
        message: 'the toy model is deployed as toy',
      });
    }
    if (config.distill.needed < config.distill.train + config.distill.validation) {
      context.addIssue({
        code: 'custom',
        path: ['distill', 'needed'],
        message: `selection needs train + validation = ${config.distill.train + config.distill.validation} successful runs; needed is ${config.distill.needed}`,
      });
    }
  });
export type RunConfig = z.infer<typeof RunConfig>;

/** The endpoint of each role, the executor's standing in for a role that names none. */
export function roleEndpoints(config: RunConfig): Record<'executor' | 'judge' | 'optimizer', Endpoint> {
  const { executor, judge, optimizer } = config.roles;
  return { executor, judge: judge ?? executor, optimizer: optimizer ?? executor };
}

/** The JSON Schema of the configuration file, for editors. */
export function runConfigJsonSchema(): unknown {
  return z.toJSONSchema(RunConfig, { io: 'input' });
}

/** Reads and validates a configuration file; every problem is one line naming the file and the field. */
export async function loadRunConfig(file: string): Promise<RunConfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new UserError(`${file}: cannot read the configuration file`);
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    throw new UserError(`${file}: not valid YAML: ${(error as Error).message}`);
  }
  return parseRunConfig(data, file);
}

export function parseRunConfig(data: unknown, source: string): RunConfig {
  const parsed = RunConfig.safeParse(data);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map(
    (issue) => `${source}: ${issue.path.join('.') || '(top level)'}: ${issue.message}`,
  );
  throw new UserError(`the configuration is not valid:\n  ${problems.join('\n  ')}`);
}
