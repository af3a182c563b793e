import { readFile } from 'node:fs/promises';

import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

import { UserError } from '../errors.js';
import { migrateRunConfig } from './config-migration.js';
import { Endpoint } from './endpoint.js';
import { DEFAULT_HARNESS_PROFILE, HARNESS_PROFILES } from './harness-profile.js';
import { Evaluation } from './evaluation-settings.js';
import { Execution } from './execution.js';
import { FaultTolerance } from './fault-tolerance.js';
import { Budgets, Concurrency, Distill, Sampling, Search } from './loop-settings.js';
import { ModelSetting } from './model-setting.js';
import { NetworkSettings } from './network-settings.js';
import { NotifySettings } from './notify-settings.js';
import { checkBaseUrls, checkRoleSampling } from './role-checks.js';
import { Rsi } from './rsi-settings.js';
import { SandboxMode } from './sandbox-mode.js';

export { Endpoint, roleEndpoints, type RoleEndpoints } from './endpoint.js';
export { evaluationConfig, type EvaluationConfig } from './evaluation-settings.js';

/**
 * The one configuration file of a run (`mass search --config`, later `mass rsi`): the model's kind, endpoints and
 * model per role, sampling, budgets, concurrency, seeds, tasks, judge mode and champion rule. Every field has the
 * paper's default; the same model plays every role unless a role names another (the paper's ablations swap one
 * role's model). Each section's schema is in a module of its own.
 */

/** What a task's generator accepts as `--seed`. */
const DataSeed = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);

/** A run's or an evaluation's name: a leading letter or digit keeps `..` or `.staging` out of the run folders. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const RunConfigObject = z
  .object({
    $schema: z.string().optional(),
    name: z.string().regex(NAME, 'letters, digits, ".", "_" and "-", starting with a letter or digit'),
    suite: z.string().min(1).describe('the task suite folder, e.g. suites/research-12'),
    tasks: z
      .array(z.string().min(1))
      .optional()
      .describe('task ids to use; default: every train task of the suite'),
    model: ModelSetting.describe(
      'what the model is, once: served (default: vLLM or another OpenAI-compatible server) or toy (the built-in toy model)',
    ),
    roles: z
      .object({
        executor: Endpoint,
        judge: Endpoint.optional().describe('default: the executor'),
        optimizer: Endpoint.optional().describe('default: the executor'),
      })
      .strict(),
    sampling: Sampling.prefault({}),
    budgets: Budgets,
    concurrency: Concurrency,
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
    search: Search,
    sandbox: SandboxMode.default('bubblewrap'),
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
    sandboxGpus: z
      .array(z.number().int().nonnegative().max(1023))
      .min(1, 'list at least one GPU, or leave sandboxGpus out')
      .refine((gpus) => new Set(gpus).size === gpus.length, 'a GPU is listed twice')
      .optional()
      .describe(
        "the host's GPUs episodes may use (/dev/nvidia<n>, as nvidia-smi numbers them): each running episode gets one to itself, and waits while all are taken; default none",
      ),
    network: NetworkSettings.optional().describe(
      "what episodes may reach beyond their tasks' allow-lists: the non-public destinations the run opens",
    ),
    execution: Execution.optional().describe(
      'where episodes run: local (default) or queue (mass worker processes through Redis; docs/several-machines.md)',
    ),
    rsi: Rsi.prefault({}).describe('generations (mass rsi): training, deployment and served names'),
    distill: Distill,
    evaluation: Evaluation.optional().describe('mass eval: generations compared on held-out tasks'),
    notify: NotifySettings.optional().describe(
      'a command run when a stage finishes, a run fails or a budget runs out, the event as JSON on its standard input (docs/planning-and-cost.md)',
    ),
    faultTolerance: FaultTolerance.optional().describe(
      'retrying model calls while a server fails, and waiting out outages (src/config/fault-tolerance.ts has the defaults)',
    ),
  })
  .strict()
  .superRefine((config, context) => {
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

/** Configurations written for earlier versions are read in today's form (`config-migration.ts`). */
export const RunConfig = z.preprocess(migrateRunConfig, RunConfigObject);
export type RunConfig = z.output<typeof RunConfigObject>;
export type RunConfigInput = z.input<typeof RunConfigObject>;

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
