import { contentText } from '../harness/qwen-code.js';
import { DELEGATION_TOOL } from '../workflow/delegation-tool.js';
import type { ProxyLogRow, ProxyRefusal } from '../proxy/log-row.js';
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
   * Requests that agent code posted (chat requests the harness did not build, failed ones included, and requests the
   * proxy refused as no client but agent code sends them: see `AGENT_REFUSALS`), and the conversations they formed.
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

/**
 * The proxy's refusals that only a client other than the harness causes, so agent code's requests whatever their
 * path: the harness calls the model API only (`not_forwarded` is any other path), with requests it built as valid
 * HTTP and JSON (`malformed` is a request the proxy could not read or check, on any route), each far below the body
 * bound (`too_large`: the bound leaves room for any real call). None of them reached the model server, so none is its
 * failure: counted as the agent's, they cannot make an episode pass for an infrastructure failure (`api_error`).
 * `output_budget` is the episode's own budget, which the outcome reads apart.
 */
const AGENT_REFUSALS: ReadonlySet<ProxyRefusal> = new Set(['not_forwarded', 'malformed', 'too_large']);

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
  const forgedRequests = new Set([
    ...[...provenance.values()].filter((request) => request.forgery !== null).map((request) => request.seq),
    ...rows.filter((row) => row.refusal != null && AGENT_REFUSALS.has(row.refusal)).map((row) => row.seq),
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
