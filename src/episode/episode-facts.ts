import { DELEGATION_TOOL, contentText } from '../harness/qwen-code.js';
import type { ProxyLogRow } from '../proxy/log-row.js';
import { episodeConversations, type Thread } from '../records/threads.js';
import type { ProvenanceOptions } from '../records/request-provenance.js';

export interface ToolCallSummary {
  name: string;
  /** The call's arguments as the model wrote them, cut to 300 characters. */
  input: string;
  /** The delegation this call ran under; null for the orchestrator's own calls and the harness's helpers'. */
  parentToolUseId: string | null;
}

/** The orchestrator's last response the proxy recorded: what the harness's final result must say. */
export interface OrchestratorFinal {
  seq: number;
  text: string;
  toolCalls: number;
}

/**
 * What the record states about the team's work, all from the proxy log (written outside the sandbox, by the host),
 * none from what the harness printed (agent code can write into the harness's output).
 */
export interface EpisodeFacts {
  threads: Thread[];
  /** `agent` calls in the orchestrator's responses. */
  delegations: number;
  /** The last tool calls the model asked for, newest last, for diagnosing a failure. */
  lastToolCalls: ToolCallSummary[];
  orchestratorFinal: OrchestratorFinal | null;
  /**
   * Requests that agent code posted (chat requests the harness did not build, failed ones included, and requests for
   * paths the proxy does not forward), and the conversations they formed.
   */
  forged: {
    requests: number;
    threads: number;
    usage: { promptTokens: number; completionTokens: number; reasoningTokens: number };
  };
  /** The sequence numbers of those requests: not the harness's calls, whatever became of them. */
  forgedRequests: ReadonlySet<number>;
}

const LAST_TOOL_CALLS = 8;

export function episodeFacts(rows: ProxyLogRow[], options: ProvenanceOptions = {}): EpisodeFacts {
  const { threads, provenance, exchanges } = episodeConversations(rows, options);
  const genuine = exchanges.filter((exchange) => exchange.provenance.forgery === null);
  const orchestrator = genuine.filter((exchange) => exchange.provenance.role === 'orchestrator');
  const delegations = orchestrator
    .flatMap((exchange) => exchange.response.tool_calls ?? [])
    .filter((call) => call.function.name === DELEGATION_TOOL).length;
  const lastToolCalls = genuine
    .flatMap((exchange) =>
      (exchange.response.tool_calls ?? []).map((call) => ({
        name: call.function.name,
        input: call.function.arguments.slice(0, 300),
        parentToolUseId: exchange.provenance.delegatedBy,
      })),
    )
    .slice(-LAST_TOOL_CALLS);
  const last = orchestrator.at(-1);
  const forgedThreads = threads.filter((thread) => thread.forged === true);
  // The harness calls the model API only: a request for any other path, refused by the proxy, was agent code's.
  const forgedRequests = new Set([
    ...[...provenance.values()].filter((request) => request.forgery !== null).map((request) => request.seq),
    ...rows.filter((row) => row.refusal === 'not_forwarded').map((row) => row.seq),
  ]);
  return {
    threads,
    delegations,
    lastToolCalls,
    orchestratorFinal: last
      ? {
          seq: last.seq,
          text: contentText(last.response.content),
          toolCalls: last.response.tool_calls?.length ?? 0,
        }
      : null,
    forged: {
      requests: forgedRequests.size,
      threads: forgedThreads.length,
      usage: forgedThreads.reduce(
        (sum, thread) => ({
          promptTokens: sum.promptTokens + thread.usage.promptTokens,
          completionTokens: sum.completionTokens + thread.usage.completionTokens,
          reasoningTokens: sum.reasoningTokens + thread.usage.reasoningTokens,
        }),
        { promptTokens: 0, completionTokens: 0, reasoningTokens: 0 },
      ),
    },
    forgedRequests,
  };
}
