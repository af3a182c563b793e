import { z } from 'zod';

import { CallCost } from '../model/types.js';
import { defineRecord } from '../store/record.js';
import { WorkflowProposal } from './optimizer-call.js';
import { ShownToOptimizer } from './optimizer-call.js';

const Usage = z.object({
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  reasoningTokens: z.number().int().nonnegative(),
  totalTokens: z.number().int().nonnegative(),
  /** What the call(s) cost, reported or computed; absent when unknown (and in records from before costs). */
  cost: CallCost.optional(),
});

/** One model call of an optimizer proposal: what was sent after the prompt, what came back, and what it was worth. */
export const OptimizerAttempt = z.object({
  /** 1-based. */
  attempt: z.number().int().positive(),
  /** `initial`: the prompt; `repair`: errors sent back; `change-bound`: the proposal changed too much. */
  purpose: z.enum(['initial', 'repair', 'change-bound']),
  /** The user message of this call (for the first call, the prompt's). */
  message: z.string(),
  output: z.object({
    content: z.string().nullable(),
    reasoning: z.string().nullable(),
    finishReason: z.string().nullable(),
  }),
  usage: Usage.nullable(),
  durationMs: z.number().nonnegative(),
  /** The parse outcome: usable, or the errors that made it unusable. */
  outcome: z.discriminatedUnion('ok', [
    z.object({ ok: z.literal(true), changeFraction: z.number() }),
    z.object({
      ok: z.literal(false),
      reason: z.enum(['invalid-output', 'change-bound-exceeded']),
      errors: z.array(z.string()),
      /** The share of the design a valid but too large proposal changed. */
      changeFraction: z.number().optional(),
    }),
  ]),
});
export type OptimizerAttempt = z.infer<typeof OptimizerAttempt>;

const Shared = {
  /** The model name sent in requests and the endpoint label (never a key). */
  model: z.string(),
  endpoint: z.string(),
  prompt: z.object({ system: z.string(), user: z.string() }),
  /** What the prompt showed, in structured form (absent in records written before it was recorded). */
  shown: ShownToOptimizer.optional(),
  maxChangeFraction: z.number().nullable(),
  attempts: z.array(OptimizerAttempt).min(1),
  /** Summed over the attempts; calls whose server reported no usage count 0. */
  usage: Usage,
};

/** The whole story of one proposal, ready to record: a usable proposal, or a failure that says why. */
export const OptimizerOutcome = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    ...Shared,
    proposal: WorkflowProposal,
    /** The share of the current design the proposal changes (see `WorkflowChangeSize`). */
    changeFraction: z.number(),
    /** `renderWorkflowDiff` of current → proposed, for people reading the record. */
    diffText: z.string(),
  }),
  z.object({
    ok: z.literal(false),
    ...Shared,
    reason: z.enum(['invalid-output', 'change-bound-exceeded']),
    /** The errors of the last attempt. */
    errors: z.array(z.string()),
    /** For `change-bound-exceeded`: the valid proposal that was refused for changing too much. */
    refusedProposal: WorkflowProposal.nullable(),
  }),
]);
export type OptimizerOutcome = z.infer<typeof OptimizerOutcome>;

/** `optimizer-call.json`: one proposal with its prompt, every attempt and its outcome. */
export const OptimizerCallRecord = defineRecord({
  kind: 'optimizer-call',
  version: 1,
  schema: z.object({
    taskId: z.string(),
    /** The label of the design that was improved. */
    currentLabel: z.string(),
    outcome: OptimizerOutcome,
  }),
});
export type OptimizerCallRecord = z.infer<(typeof OptimizerCallRecord)['schema']>;
