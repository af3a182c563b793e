import type { ProxyLogRow } from '../proxy/log-row.js';
import { RETRYABLE_UPSTREAM_STATUSES } from '../proxy/upstream-retry.js';
import type { OrchestratorFinal, ToolCallSummary } from './episode-facts.js';
import type { HarnessSummary } from '../harness/harness-events.js';
import type { FailureKind, ApiErrorCause, EpisodeFailure } from '../records/episode-failure.js';
import { SANDBOX_OPENINGS } from './sandbox-run.js';

export interface OutcomeEvidence {
  /** What the harness printed: agent code can write into it, so a success it reports must be confirmed. */
  harness: HarnessSummary;
  /** The orchestrator's last response, from the proxy log; null when it recorded none. */
  orchestratorFinal: OrchestratorFinal | null;
  /** The last tool calls the model asked for (from the proxy log). */
  lastToolCalls: ToolCallSummary[];
  /** The failed call that stopped the harness, when agent code posted it to the proxy itself; else null. */
  stoppedByForgedRequest: number | null;
  process: {
    exitCode: number | null;
    signal: string | null;
    timedOut: boolean;
    limitExceeded: 'cpu' | 'memory' | 'processes' | 'disk' | null;
    /** False when the sandbox's own set-up failed before the harness started; absent where not told. */
    started?: boolean;
  };
  /** The proxy log, without the requests agent code posted itself. */
  rows: ProxyLogRow[];
  /** Protected assets that changed during the episode. */
  tamperedPaths: string[];
  /** The proxy refused calls once the episode's output budget was spent. */
  outputBudgetSpent: boolean;
}

/** Text a harness prints as its last answer when a model call failed and it gave up. */
const API_ERROR_TEXT = /^\s*(\[?API Error|Connection error|Request failed|Error: (4|5)\d\d)/i;

/**
 * Success only when the harness reports a final successful result, exits cleanly, no model call failed, and the
 * result is the orchestrator's last response as the proxy recorded it, a final answer (agent code can write a
 * `result` event into the harness's output, never a response into the proxy's log); otherwise the first matching
 * failure, most serious first: a changed protected asset, a failed request of agent code's own that stopped the
 * harness, a time or CPU limit, the output budget, a failed model call (of the harness's), then anything else the
 * harness did wrong, then a success the proxy does not confirm.
 */
export function classifyOutcome(evidence: OutcomeEvidence): {
  status: 'success' | 'failure';
  failure: EpisodeFailure | null;
} {
  const failure = (kind: FailureKind, detail: string) => ({
    status: 'failure' as const,
    failure: { kind, detail, lastToolCalls: evidence.lastToolCalls },
  });
  const { harness, process, rows } = evidence;
  if (evidence.tamperedPaths.length > 0) {
    return failure('sandbox_violation', `protected assets changed: ${evidence.tamperedPaths.join(', ')}`);
  }
  if (evidence.stoppedByForgedRequest !== null) {
    return failure(
      'sandbox_violation',
      `agent code posted chat requests to the model's proxy itself; one of them (#${evidence.stoppedByForgedRequest}) failed, which stopped the harness`,
    );
  }
  if (process.timedOut)
    return failure('timeout', 'the episode ran past its wall-clock limit and was stopped');
  if (process.limitExceeded === 'cpu')
    return failure('timeout', 'the episode used up its CPU-time limit and was stopped');
  if (process.limitExceeded === 'processes')
    return failure(
      'resource_limit',
      'the episode ran more processes than its process limit allows and was stopped',
    );
  if (process.limitExceeded === 'memory')
    return failure('resource_limit', 'the episode went over its memory limit and was stopped');
  if (process.limitExceeded === 'disk')
    return failure('resource_limit', 'the episode wrote past its disk limit and was stopped');
  if (evidence.outputBudgetSpent)
    return failure('output_budget', "the episode's output-token budget was spent");
  const failedCalls = rows.filter(
    (row) => !row.clientDisconnected && (row.error !== null || row.status === null || row.status >= 400),
  );
  if (failedCalls.length > 0) {
    const first = failedCalls[0]!;
    return {
      status: 'failure',
      failure: {
        ...failure(
          'api_error',
          `${failedCalls.length} model call(s) failed; the first (#${first.seq}): ${first.status ?? 'no status'} ${first.error ?? ''}`.trim(),
        ).failure,
        cause: apiErrorCause(first),
      },
    };
  }
  if (
    harness.lastAssistantText &&
    API_ERROR_TEXT.test(harness.lastAssistantText) &&
    apiErrorTextTrusted(rows)
  ) {
    return failure(
      'api_error',
      `the harness ended on an API error: ${harness.lastAssistantText.slice(0, 300)}`,
    );
  }
  if (process.started === false) {
    return failure(
      'harness_crash',
      `the harness never started: the sandbox's own set-up failed, each of the ${SANDBOX_OPENINGS} times it was opened (exit ${process.exitCode}); its words are in harness-stderr.log`,
    );
  }
  if (!harness.result) {
    const how = process.signal ? `was killed by ${process.signal}` : `exited with code ${process.exitCode}`;
    return failure('harness_crash', `the harness ${how} without a final result`);
  }
  if (harness.result.subtype !== 'success' || harness.result.isError) {
    return failure(
      'harness_crash',
      `the harness's final result is "${harness.result.subtype}"${harness.result.isError ? ' (an error)' : ''}`,
    );
  }
  if (process.exitCode !== 0)
    return failure('harness_crash', `the harness reported success but exited with code ${process.exitCode}`);
  const unconfirmed = unconfirmedResult(harness.result.text, evidence.orchestratorFinal);
  if (unconfirmed) return failure('unconfirmed_result', unconfirmed);
  return { status: 'success', failure: null };
}

/**
 * Whether the harness's own "API error" text may be believed. Agent code can print into the harness's output and then
 * kill it, so the text counts only with evidence it cannot forge: no model call recorded at all (no tool ran, so no
 * agent code did: the harness could not reach its model), or a call of the harness's that it gave up waiting for.
 */
function apiErrorTextTrusted(rows: readonly ProxyLogRow[]): boolean {
  return rows.length === 0 || rows.some((row) => row.clientDisconnected);
}

/** Why a successful final result is not the orchestrator's last recorded response; null when it is. */
function unconfirmedResult(text: string | null, final: OrchestratorFinal | null): string | null {
  if (final === null)
    return 'the harness reported success, but the proxy recorded no response of the orchestrator';
  if (final.toolCalls > 0) {
    return `the harness reported success, but the orchestrator's last recorded response (#${final.seq}) asks for ${final.toolCalls} tool call(s): no final answer`;
  }
  if ((text ?? '').trim() !== final.text.trim()) {
    return `the harness's final result is not the orchestrator's last recorded response (#${final.seq}): something other than the harness wrote it`;
  }
  return null;
}

/** Why a failed call failed (see `ApiErrorCause`). */
export function apiErrorCause(row: Pick<ProxyLogRow, 'status' | 'error' | 'attempts'>): ApiErrorCause {
  // The server failing at the last attempt (even one replaying a cut stream) is the server being down.
  const last = row.attempts?.at(-1);
  if (last && (last.status === null || RETRYABLE_UPSTREAM_STATUSES.has(last.status)))
    return 'server_unavailable';
  if (row.error?.includes('mid-response') || (row.status !== null && row.status < 400)) return 'stream_cut';
  if (row.status === null || RETRYABLE_UPSTREAM_STATUSES.has(row.status)) return 'server_unavailable';
  return 'request_refused';
}
