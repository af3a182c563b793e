import type { TeamBudgets } from '../records/optimizer-call.js';

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
