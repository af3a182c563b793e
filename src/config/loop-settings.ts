import { z } from 'zod';

import { durationSchema } from '../timer-duration.js';
import { JudgeOrders } from './judge-orders.js';
import { CostLimits, TokenLimits } from './prices.js';

/** The loop's own settings: sampling, budgets, concurrency, the inner loop (search) and the outer loop (distill). */

export const Sampling = z
  .object({
    temperature: z.number().min(0).max(2).default(0.6),
    topP: z.number().gt(0).max(1).default(0.95),
    topK: z.number().int().default(20),
    enableThinking: z.boolean().default(true),
  })
  .strict();

/** Time, tokens and resources per episode and per call. */
export const Budgets = z
  .object({
    episodeTimeoutSeconds: durationSchema({ unit: 's' }).default(3600),
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
      .describe("processes of an episode's tree at once (default 1024; the kernel allows 8 threads each)"),
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
      .describe("the model's context length; a server that lists a smaller one (vLLM's max_model_len) wins"),
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
    cost: CostLimits,
    tokens: TokenLimits,
  })
  .strict()
  .prefault({});

/** How much runs at once. */
export const Concurrency = z
  .object({
    episodes: z.number().int().positive().default(4),
    judgments: z.number().int().positive().default(8),
    tasks: z.number().int().positive().default(4),
  })
  .strict()
  .prefault({});

const REPEATS_HINT =
  'give a whole number of reruns of each champion design, 0 (the default) to measure no search noise, e.g. repeats: 2';

/**
 * The inner loop: iterations, champion rule, judge mode, repair attempts, the stabiliser, and the reruns that measure
 * the search's noise (docs/search.md, "Search noise: Figure 8").
 */
export const Search = z
  .object({
    iterations: z.number().int().min(0).default(11),
    championRule: z.enum(['paper', 'official']).default('paper'),
    judgeMode: JudgeOrders.default('random'),
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
      .describe('bounds how much of the design may change per iteration, decaying: a learning-rate schedule'),
    repeats: z
      .number({ error: REPEATS_HINT })
      .int({ error: REPEATS_HINT })
      .min(0, { error: REPEATS_HINT })
      .default(0)
      .describe(
        'reruns of each unchanged champion design (and of the bare reference) with new seeds, judged beside the search to measure its noise; 0: none',
      ),
  })
  .strict()
  .prefault({});

/** The outer loop: champion runs, tournament, Bradley–Terry, selection, training windows. */
export const Distill = z
  .object({
    runs: z.number().int().positive().default(18).describe('champion runs per task, each with its own seed'),
    needed: z
      .number()
      .int()
      .positive()
      .default(16)
      .describe('successful runs selection needs; fewer start bounded top-up runs'),
    maxTopUps: z.number().int().min(0).default(6).describe('extra runs per task at most'),
    singleAgentCollection: z
      .boolean()
      .default(false)
      .describe(
        'also run each champion task single-agent (no agent tool, no team design), ranked and selected the same way, for `mass students`',
      ),
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
      .prefault({})
      .describe('used by schedule: adaptive; the defaults spend the ring’s 54 judgments for 18 episodes'),
    judgeMode: JudgeOrders.default('random'),
    judgeRepairAttempts: z.number().int().min(0).default(2),
    prior: z.number().gt(0).default(0.5).describe('Bradley–Terry virtual wins and losses per episode'),
    train: z.number().int().positive().default(15).describe('ranks 1..train are trained on'),
    validation: z.number().int().min(0).default(1).describe('the next ranks are for validation'),
    windowTokens: z.number().int().positive().default(49_152),
    maxContextTokens: z.number().int().min(0).default(8_192),
  })
  .strict()
  .prefault({})
  .describe('the outer loop: champion runs, tournament, Bradley–Terry, selection, training windows');
