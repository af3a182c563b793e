import { z } from 'zod';

/**
 * What one run of a design may use, as the run configures its episodes: the wall clock, the output tokens of each
 * model call and of the whole run, and the number of model calls. The optimizer is told them, so that it designs a
 * team that can finish: a run stopped by a limit fails, and a failed run loses.
 */
export const TeamBudgets = z.object({
  timeoutSeconds: z.number().positive(),
  maxOutputTokensPerCall: z.number().int().positive(),
  /** Output tokens of the whole run (`budgets.episodeOutputBudget`); null: no limit. */
  outputTokens: z.number().int().positive().nullable(),
  /** Model calls of the whole run; null: no limit (the run configuration sets none). */
  modelCalls: z.number().int().positive().nullable(),
});
export type TeamBudgets = z.infer<typeof TeamBudgets>;

export function teamBudgetsSection(budgets: TeamBudgets): string {
  const number = (value: number) => String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const lines = [
    `- wall clock: ${describeSeconds(budgets.timeoutSeconds)} for the whole run, every agent's calls and commands included`,
    `- output tokens per model call: at most ${number(budgets.maxOutputTokensPerCall)}, thinking included`,
    `- output tokens in all: ${budgets.outputTokens === null ? 'no limit beyond the wall clock' : `at most ${number(budgets.outputTokens)}; past it every further call is refused`}`,
    `- model calls: ${budgets.modelCalls === null ? 'no limit beyond the wall clock' : `at most ${number(budgets.modelCalls)}`}`,
  ];
  return [
    '# What a run of the team may use',
    '',
    'Each run of a design, the orchestrator and all its subagents together, has:',
    ...lines,
    '',
    'A run stopped by one of these limits fails, and a failed run loses the comparison. The record of the current design’s run says how much of them it used.',
  ].join('\n');
}

function describeSeconds(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  const rest = Math.round(seconds % 60);
  return rest === 0 ? `${minutes} min` : `${minutes} min ${rest} s`;
}
