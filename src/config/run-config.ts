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
    provider: z.enum(['openai-compatible', 'anthropic']).default('openai-compatible'),
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
    seed: z.number().int().nonnegative().default(0),
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
  .strict();
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
