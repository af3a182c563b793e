import { z } from 'zod';

import { EvaluationOrders, JudgeOrders } from '../config/judge-orders.js';
import { defineRecord } from '../store/record.js';
import { BundleSummary } from './bundle-summary.js';
import { Verdict } from './verdict.js';
import { CallCost } from '../model/types.js';

/** The caller's names for the two workspaces; A and B are only the order in which one prompt showed them. */
export const PairSide = z.enum(['x', 'y']);
export type PairSide = z.infer<typeof PairSide>;
export const PairWinner = z.enum(['x', 'y', 'tie']);
export type PairWinner = z.infer<typeof PairWinner>;

export const JudgeUsage = z.object({
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  reasoningTokens: z.number().int().nonnegative(),
  totalTokens: z.number().int().nonnegative(),
  /** What the call(s) cost, reported or computed; absent when unknown (and in records from before costs). */
  cost: CallCost.optional(),
});
export type JudgeUsage = z.infer<typeof JudgeUsage>;

/** One model call of a judgment: the first answer, or a repair after an unusable one. */
export const JudgeAttempt = z.object({
  attempt: z.number().int().positive(),
  /** The message that asked for a repair; null for the first attempt. */
  repairRequest: z.string().nullable(),
  /** The reply's text as the model wrote it. */
  rawOutput: z.string(),
  reasoning: z.string().nullable(),
  finishReason: z.string().nullable(),
  parse: z.discriminatedUnion('ok', [
    z.object({ ok: z.literal(true), verdict: Verdict }),
    z.object({ ok: z.literal(false), error: z.string() }),
  ]),
  /** As the server reported it; null when it reported none. */
  usage: JudgeUsage.nullable(),
  latencyMs: z.number().nonnegative(),
});
export type JudgeAttempt = z.infer<typeof JudgeAttempt>;

/** One prompt with one order of the workspaces, and every attempt it took to get a verdict (or not). */
export const SingleJudgment = z
  .object({
    /** Which of the caller's workspaces the prompt showed as A. */
    shownAsA: PairSide,
    prompt: z.object({ system: z.string(), user: z.string() }),
    status: z.enum(['ok', 'failed']),
    /** In the prompt's terms (A, B, tie); null when no attempt gave a valid verdict. */
    verdict: Verdict.nullable(),
    /** The verdict in the caller's terms. */
    winner: PairWinner.nullable(),
    failure: z.string().nullable(),
    attempts: z.array(JudgeAttempt).min(1),
    usage: JudgeUsage,
  })
  .refine((judgment) => (judgment.status === 'ok') === (judgment.winner !== null), {
    message: 'a judgment has a winner exactly when it succeeded',
  });
export type SingleJudgment = z.infer<typeof SingleJudgment>;

/** A judgment record's `mode`: the judge's A/B orders (`src/config/judge-orders.ts`). */
export { EvaluationOrders, JudgeOrders };

/** `pairwise-judgment`: the comparison of two workspaces of one task, with everything needed to audit it. */
export const PairwiseJudgmentRecord = defineRecord({
  kind: 'pairwise-judgment',
  version: 1,
  schema: z
    .object({
      task: z.string(),
      /**
       * `random`: one judgment, A/B order drawn from the seed and the order key; `official`: one, drawn from the seed
       * alone as the official code draws it; `both`: both orders, disagreement is a tie.
       */
      mode: EvaluationOrders,
      seed: z.number().int(),
      /** Mixed with the seed to draw the order, so different pairs under one seed get independent orders. */
      orderKey: z.string(),
      model: z.string(),
      sampling: z.looseObject({}),
      maxRepairAttempts: z.number().int().nonnegative(),
      x: z.object({ label: z.string(), bundle: BundleSummary }),
      y: z.object({ label: z.string(), bundle: BundleSummary }),
      /**
       * Files shown once before the workspaces, the same in both or differing in a few lines (absent in records
       * written before it was done).
       */
      sharedFiles: z.array(z.string()).optional(),
      /** Those of `sharedFiles` that differ, shown with their differing lines (absent before it was done). */
      sharedFilesDiffering: z.array(z.string()).optional(),
      judgments: z.array(SingleJudgment).min(1).max(2),
      /** `failed`: a judgment gave no valid verdict within its repairs; never turned into a tie. */
      status: z.enum(['decided', 'failed']),
      winner: PairWinner.nullable(),
      /** In `both` mode, whether the two orders named the same winner; null otherwise. */
      ordersAgree: z.boolean().nullable(),
      failure: z.string().nullable(),
      usage: JudgeUsage,
      startedAt: z.string(),
      durationMs: z.number().nonnegative(),
    })
    .refine((judgment) => (judgment.status === 'decided') === (judgment.winner !== null), {
      message: 'a pairwise judgment has a winner exactly when it was decided',
    }),
});
export type PairwiseJudgment = z.infer<(typeof PairwiseJudgmentRecord)['schema']>;
