import { z } from 'zod';

/** What the optimizer is told about how a run of a design went: its outcome, its failure and how the team worked. */
export const ExecutionMetadata = z.object({
  status: z.enum(['success', 'failure']),
  failure: z.object({ kind: z.string(), detail: z.string() }).nullable(),
  delegations: z.number().int().nonnegative(),
  subagentThreads: z.number().int().nonnegative(),
  modelCalls: z.number().int().nonnegative(),
  failedModelCalls: z.number().int().nonnegative(),
  tokens: z.object({
    prompt: z.number().int().nonnegative(),
    completion: z.number().int().nonnegative(),
    reasoning: z.number().int().nonnegative(),
    /** Completion tokens written by the orchestrator and by subagents: who did the work. */
    orchestratorCompletion: z.number().int().nonnegative(),
    subagentCompletion: z.number().int().nonnegative(),
  }),
  durationMs: z.number().nonnegative(),
  limitExceeded: z.string().nullable(),
  tamperedPaths: z.array(z.string()),
});
export type ExecutionMetadata = z.infer<typeof ExecutionMetadata>;
