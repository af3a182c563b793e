import type { EpisodeRecord } from '../records/episode-record.js';
import type { ExecutionMetadata } from '../records/execution-metadata.js';

export function executionMetadata(record: EpisodeRecord): ExecutionMetadata {
  const completionOf = (role: 'orchestrator' | 'subagent') =>
    record.usage.perThread
      .filter((thread) => thread.role === role)
      .reduce((sum, thread) => sum + thread.completionTokens, 0);
  return {
    status: record.status,
    failure: record.failure ? { kind: record.failure.kind, detail: record.failure.detail } : null,
    delegations: record.delegations,
    subagentThreads: record.usage.perThread.filter((thread) => thread.role === 'subagent').length,
    modelCalls: record.modelCalls,
    failedModelCalls: record.failedModelCalls,
    tokens: {
      prompt: record.usage.total.promptTokens,
      completion: record.usage.total.completionTokens,
      reasoning: record.usage.total.reasoningTokens,
      orchestratorCompletion: completionOf('orchestrator'),
      subagentCompletion: completionOf('subagent'),
    },
    durationMs: record.timings.durationMs,
    limitExceeded: record.sandbox.limitExceeded,
    tamperedPaths: record.integrity.tamperedPaths,
  };
}

/** A few lines for the prompt. */
export function renderExecutionMetadata(execution: ExecutionMetadata): string {
  const lines = [
    `- status: ${execution.status}${execution.failure ? ` (${execution.failure.kind}: ${execution.failure.detail})` : ''}`,
    `- delegations to subagents: ${execution.delegations} (${execution.subagentThreads} subagent conversations)`,
    `- model calls: ${execution.modelCalls}${execution.failedModelCalls > 0 ? `, ${execution.failedModelCalls} failed` : ''}`,
    `- tokens: ${execution.tokens.prompt} prompt, ${execution.tokens.completion} completion (${execution.tokens.reasoning} reasoning); completion by the orchestrator ${execution.tokens.orchestratorCompletion}, by subagents ${execution.tokens.subagentCompletion}`,
    `- wall clock: ${formatDuration(execution.durationMs)}`,
  ];
  if (execution.limitExceeded) lines.push(`- stopped by the ${execution.limitExceeded} limit`);
  if (execution.tamperedPaths.length > 0) {
    lines.push(`- protected files changed (not allowed): ${execution.tamperedPaths.join(', ')}`);
  }
  return lines.join('\n');
}

function formatDuration(milliseconds: number): string {
  const seconds = Math.round(milliseconds / 1000);
  if (seconds < 120) return `${seconds} s`;
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}
