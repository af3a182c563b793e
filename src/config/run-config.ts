import { readFile } from 'node:fs/promises';

import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

import { UserError } from '../errors.js';
import { DEFAULT_HARNESS_PROFILE, HARNESS_PROFILES } from '../harness/qwen-settings.js';
import { recognisedProvider } from '../model/create-model.js';
import { FaultPlan } from '../testing/fault-injection.js';
import { baseUrlProblem, type BaseUrlUse } from './base-url.js';
import { Execution } from './execution.js';
import { FaultTolerance } from './fault-tolerance.js';
import { RoleSampling, roleSamplingProblems } from './role-sampling.js';

/**
 * The one configuration file of a run (`mass search --config`, later `mass rsi`): endpoints and model per role,
 * sampling, budgets, concurrency, seeds, tasks, judge mode and champion rule. Every field has the paper's default;
 * the same model plays every role unless a role names another (the paper's ablations swap one role's model).
 */

const Endpoint = z
  .object({
    provider: z
      .enum(['openai-compatible', 'openai', 'anthropic', 'toy'])
      .default('openai-compatible')
      .describe(
        "openai-compatible: vLLM and the like; openai: OpenAI's API (also any baseUrl on api.openai.com); toy: the built-in rule-based toy model, started by mass itself (the demo)",
      ),
    baseUrl: z
      .string()
      .url()
      .describe(
        "the executor's and OpenAI's: OpenAI style, ending in /v1; a judge's or optimizer's other OpenAI-compatible server: its own version path; anthropic: the server's root (optional for openai and anthropic: their own API)",
      )
      .optional(),
    model: z.string().min(1),
    apiKeyEnv: z
      .string()
      .min(1)
      .optional()
      .describe('the environment variable holding the key; never the key'),
    maxConcurrency: z.number().int().positive().default(64),
    sampling: RoleSampling.optional().describe(
      "this role's own sampling; on openai-compatible servers unset fields come from the run's sampling, on openai and anthropic only what is set here is sent",
    ),
    faults: FaultPlan.optional().describe(
      'toy only: faults the toy model injects into a share of its answers (every role: one server), e.g. { rate: 0.1, kinds: [503, 429, reset, hang] }',
    ),
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
        .optional()
        .describe(
          'a Python with src/train/python/requirements.txt; default: MASS_TRAINER_PYTHON, else the .venv-trainer/ that scripts/install-trainer.sh made, else python3',
        ),
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
      .describe(
        'chat template and tokenizer for the training data (tokenizer_config.json); default: the generation’s own weights directory when it holds them, else Qwen3’s for a Qwen3 model',
      ),
    allowTokenizerMismatch: z
      .boolean()
      .optional()
      .describe(
        'build training data with a tokenizer not known to be the served model’s (they share one vocabulary)',
      ),
    trainer: Trainer.default({ kind: 'python' }),
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

const EvaluationCondition = z
  .enum(['bare', 'workflow', 'single-agent'])
  .describe(
    "bare: the task alone (the paper's); workflow: the task's champion design; single-agent: the bare task without the agent tool",
  );

/**
 * `mass eval`: what is compared, on which tasks and conditions, and who judges. An outside measure: no loop stage
 * reads it or anything it writes, so it may be changed or added to a run at any time.
 */
const Evaluation = z
  .object({
    name: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-"')
      .default('default')
      .describe('the records go to evaluation/<name>/'),
    generations: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe("generations of the run's registry, by name; default: every registered one"),
    models: z
      .array(
        z
          .object({
            name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-"'),
            endpoint: Endpoint,
          })
          .strict(),
      )
      .optional()
      .describe('named model endpoints to compare instead (two checkpoints, an adapter and its base)'),
    comparisons: z
      .array(z.object({ candidate: z.string().min(1), baseline: z.string().min(1) }).strict())
      .optional()
      .describe('default: each generation against the first (L0), and against its parent'),
    conditions: z.array(EvaluationCondition).min(1).default(['bare']),
    tasks: z.array(z.string().min(1)).optional().describe("task ids; default: the suite's test split"),
    rollouts: z.number().int().positive().default(10).describe('per task, model and condition'),
    seed: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe("replicate i samples with seed + i for every model; default: the run's seed"),
    judges: z
      .array(
        Endpoint.extend({
          name: z
            .string()
            .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-"')
            .optional(),
        }).strict(),
      )
      .default([])
      .describe('external judges (any provider); each judges every pair with every seed in both orders'),
    judgeSeeds: z.number().int().positive().default(3),
    selfJudge: z
      .boolean()
      .default(true)
      .describe(
        'the candidate also judges its own pairs, as the loop does: the self-judge of the agreement figures',
      ),
    judgeRepairAttempts: z.number().int().min(0).default(2),
    oracleTieMargin: z
      .number()
      .min(0)
      .default(2)
      .describe("the oracle's preference: within this many grade points, a tie"),
    tournamentSample: z
      .number()
      .int()
      .min(0)
      .default(20)
      .describe('tournament matches per task re-judged for evaluator agreement'),
    concurrency: z
      .object({
        episodes: z.number().int().positive().default(4).describe('per model endpoint'),
        judgments: z.number().int().positive().default(8).describe('per judge'),
      })
      .strict()
      .default({ episodes: 4, judgments: 8 }),
  })
  .strict();
export type EvaluationConfig = z.output<typeof Evaluation>;

/** The evaluation section with every default, for a configuration that has none. */
export function evaluationConfig(config: RunConfig): EvaluationConfig {
  return config.evaluation ?? Evaluation.parse({});
}

/** What a task's generator accepts as `--seed`. */
const DataSeed = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);

export const RunConfig = z
  .object({
    $schema: z.string().optional(),
    // A leading letter or digit: `..` or `.staging` would put the run's folder outside --runs or among mass's own.
    name: z
      .string()
      .regex(
        /^[A-Za-z0-9][A-Za-z0-9._-]*$/,
        'letters, digits, ".", "_" and "-", starting with a letter or digit',
      ),
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
        episodeCpuSeconds: z
          .number()
          .positive()
          .optional()
          .describe(
            "CPU seconds of an episode's whole process tree; default: the timeout times half the machine's cores",
          ),
        episodeProcesses: z
          .number()
          .int()
          .positive()
          .optional()
          .describe(
            "processes of an episode's tree at once (default 1024; the kernel allows 8 threads each)",
          ),
        episodeDiskGiB: z
          .number()
          .positive()
          .optional()
          .describe("GiB an episode's workspace and home may take on disk (default 32)"),
        judgeMaxTokens: z.number().int().positive().default(49_152),
        optimizerMaxTokens: z.number().int().positive().default(49_152),
        contextWindowSize: z
          .number()
          .int()
          .positive()
          .default(262_144)
          .describe(
            "the model's context length; a server that lists a smaller one (vLLM's max_model_len) wins",
          ),
        judgeBundleTokens: z
          .number()
          .int()
          .positive()
          .default(32_000)
          .describe('tokens of each workspace bundle the judge sees (two per judgment)'),
        optimizerEvidenceTokens: z
          .number()
          .int()
          .positive()
          .default(8_000)
          .describe("tokens of the current design's workspace shown to the optimizer"),
      })
      .strict()
      .default({
        episodeTimeoutSeconds: 3600,
        maxOutputTokensPerCall: 32_768,
        judgeMaxTokens: 49_152,
        optimizerMaxTokens: 49_152,
        contextWindowSize: 262_144,
        judgeBundleTokens: 32_000,
        optimizerEvidenceTokens: 8_000,
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
    harnessProfile: z
      .enum(HARNESS_PROFILES)
      .default(DEFAULT_HARNESS_PROFILE)
      .describe(
        "qwen-code's tools and skills: lean (default) without those that cannot work in the sandbox or that research does not need; stock: qwen-code's defaults",
      ),
    sandboxHide: z
      .array(z.string().refine((path) => path.startsWith('/'), 'an absolute host path'))
      .optional()
      .describe(
        'host folders or files the agents must not see among what the sandbox shows (its allow-list: the system under /usr, part of /etc, the harness); nothing else of the host is shown',
      ),
    execution: Execution.optional().describe(
      'where episodes run: local (default) or queue (mass worker processes through Redis; README: several machines)',
    ),
    rsi: Rsi.default({
      trainer: { kind: 'python' },
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
    evaluation: Evaluation.optional().describe('mass eval: generations compared on held-out tasks'),
    faultTolerance: FaultTolerance.optional().describe(
      'retrying model calls while a server fails, and waiting out outages (src/config/fault-tolerance.ts has the defaults)',
    ),
  })
  .strict()
  .superRefine((config, context) => {
    const toy = config.roles.executor.provider === 'toy';
    if (config.roles.executor.faults && !toy) {
      context.addIssue({
        code: 'custom',
        path: ['roles', 'executor', 'faults'],
        message: 'only the toy model injects faults: set provider: toy, or remove faults',
      });
    }
    for (const role of ['judge', 'optimizer'] as const) {
      if (config.roles[role]?.faults) {
        context.addIssue({
          code: 'custom',
          path: ['roles', role, 'faults'],
          message: 'faults go on roles.executor: the toy model answers every role from one server',
        });
      }
    }
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
    checkRoleSampling(config, context);
    checkBaseUrls(config, context);
  });
export type RunConfig = z.infer<typeof RunConfig>;

const ROLE_OUTPUT_BOUNDS = {
  executor: 'maxOutputTokensPerCall',
  judge: 'judgeMaxTokens',
  optimizer: 'optimizerMaxTokens',
} as const;

/** Each role's own sampling block, checked against what its provider accepts; the executor's provider too. */
function checkRoleSampling(config: RunConfig, context: z.RefinementCtx): void {
  const { executor } = config.roles;
  if (
    executor.provider !== 'toy' &&
    recognisedProvider(executor.provider, executor.baseUrl) !== 'openai-compatible'
  ) {
    context.addIssue({
      code: 'custom',
      path: ['roles', 'executor', 'provider'],
      message:
        'the team runs in qwen-code and is the model trained: serve it on vLLM or another OpenAI-compatible server (provider: openai-compatible, baseUrl); OpenAI and Anthropic models can judge or optimize',
    });
  }
  for (const role of ['executor', 'judge', 'optimizer'] as const) {
    const endpoint = config.roles[role];
    if (!endpoint?.sampling) continue;
    const provider =
      endpoint.provider === 'toy' ? 'toy' : recognisedProvider(endpoint.provider, endpoint.baseUrl);
    const problems = roleSamplingProblems(
      provider,
      endpoint.sampling,
      config.budgets[ROLE_OUTPUT_BOUNDS[role]],
    );
    if (role === 'executor' && endpoint.sampling.reasoningEffort !== undefined) {
      problems.push(
        "the executor's harness (qwen-code) is given temperature, topP, topK and enableThinking only",
      );
    }
    for (const message of problems) {
      context.addIssue({ code: 'custom', path: ['roles', role, 'sampling'], message });
    }
  }
}

/** Each role's base URL, checked for how its provider uses it (`baseUrlProblem`), and present where one is needed. */
function checkBaseUrls(config: RunConfig, context: z.RefinementCtx): void {
  for (const role of ['executor', 'judge', 'optimizer'] as const) {
    const endpoint = config.roles[role];
    if (!endpoint) continue;
    const use = baseUrlUse(role, endpoint);
    if (use === null) continue;
    const path = ['roles', role, 'baseUrl'];
    if (endpoint.baseUrl === undefined) {
      if (use === 'team' || use === 'openai-compatible') {
        context.addIssue({
          code: 'custom',
          path,
          message: 'an OpenAI-compatible server needs its address, e.g. baseUrl: http://127.0.0.1:8000/v1',
        });
      }
      continue;
    }
    const problem = baseUrlProblem(endpoint.baseUrl, use);
    if (problem !== null) context.addIssue({ code: 'custom', path, message: problem });
  }
}

/** How a role's base URL is used; null for an executor on a provider it cannot have (reported on its own). */
function baseUrlUse(role: 'executor' | 'judge' | 'optimizer', endpoint: Endpoint): BaseUrlUse | null {
  if (endpoint.provider === 'toy') return 'toy';
  const provider = recognisedProvider(endpoint.provider, endpoint.baseUrl);
  if (role === 'executor') return provider === 'openai-compatible' ? 'team' : null;
  return provider;
}

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
