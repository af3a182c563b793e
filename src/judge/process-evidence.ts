import type { EpisodeRecord } from '../records/episode-record.js';
import { Thread } from '../records/threads.js';
import { contentText } from '../harness/qwen-code.js';
import { DELEGATION_TOOL } from '../workflow/delegation-tool.js';
import type { TokenCounter } from '../model/token-counter.js';
import { egressDestinations, readEgressLog, type EgressLogRead } from '../proxy/egress-log.js';
import { eachValidJsonLine } from '../store/json-lines.js';
import { episodePath } from '../store/run-paths.js';
import { askedBeyondTask } from './delegation-ask.js';
import { shrinkToTokens } from './excerpt.js';
import { formatBytes, formatCount, plural } from './format.js';

/** One call of the orchestrator to a subagent, with what the subagent returned. */
export interface Delegation {
  description: string;
  subagentType: string;
  prompt: string;
  /** The subagent's report as the orchestrator received it; null when the call never returned. */
  result: string | null;
}

/**
 * How the run went, from the episode record: outcome, failure, effort and delegation counts (the record takes them
 * from the proxy log, leaving out what agent code posted itself). Nothing that would identify the run (model,
 * endpoint, seed, workflow hash, folder) reaches the judge.
 */
export function renderEpisodeSummary(record: EpisodeRecord): string {
  const lines: string[] = [];
  lines.push(
    record.status === 'success'
      ? 'Run outcome: finished successfully.'
      : `Run outcome: FAILED (${record.failure?.kind ?? 'unknown'}${record.failure ? `: ${oneLine(record.failure.detail, 300)}` : ''}).`,
  );
  const roles = new Map<string, number>();
  for (const thread of record.usage.perThread) roles.set(thread.role, (roles.get(thread.role) ?? 0) + 1);
  const threadText = ['orchestrator', 'subagent', 'auxiliary']
    .filter((role) => roles.has(role))
    .map((role) => `${roles.get(role)} ${role}`)
    .join(', ');
  lines.push(
    `Model calls: ${formatCount(record.modelCalls)}${record.failedModelCalls > 0 ? ` (${formatCount(record.failedModelCalls)} failed)` : ''}; delegations by the orchestrator: ${formatCount(record.delegations)}${threadText ? `; conversations: ${threadText}` : ''}.`,
  );
  const { total } = record.usage;
  lines.push(
    `Output tokens: ${formatCount(total.completionTokens)} (of which reasoning ${formatCount(total.reasoningTokens)}); wall clock ${formatDuration(record.timings.durationMs)}.`,
  );
  if (record.sandbox.limitExceeded) lines.push(`The run hit its ${record.sandbox.limitExceeded} limit.`);
  const lastCalls = record.failure?.lastToolCalls ?? [];
  if (record.status === 'failure' && lastCalls.length > 0) {
    lines.push('Last tool calls before the failure:');
    for (const call of lastCalls.slice(-5)) lines.push(`- ${call.name} ${oneLine(call.input, 200)}`);
  }
  return lines.join('\n');
}

/** A longer line of `threads.jsonl` is skipped: below the longest string JavaScript can hold. */
const MAX_THREAD_LINE_BYTES = 256 * 1024 ** 2;

/**
 * The orchestrator's delegations, from the episode's `threads.jsonl` (forged threads left out); undefined when there
 * is no such file.
 */
export async function readDelegations(episodeDir: string): Promise<Delegation[] | undefined> {
  const file = episodePath(episodeDir, 'threads');
  const delegations = new Map<string, Delegation>();
  const { read } = await eachValidJsonLine(
    file,
    Thread,
    { maxLineBytes: MAX_THREAD_LINE_BYTES },
    (thread) => {
      if (thread.role === 'orchestrator' && thread.forged !== true) collectDelegations(thread, delegations);
    },
  );
  if (read === undefined) return undefined;
  return [...delegations.values()];
}

function collectDelegations(thread: Thread, delegations: Map<string, Delegation>): void {
  // Every segment repeats the history before it: a call is known by its id, and a later segment may add its result.
  for (const segment of thread.segments) {
    for (const message of segment.messages) {
      if (message.role === 'assistant') {
        for (const call of message.tool_calls ?? []) {
          if (call.function.name !== DELEGATION_TOOL || delegations.has(call.id)) continue;
          const input = parseArguments(call.function.arguments);
          delegations.set(call.id, {
            description: stringField(input, 'description'),
            subagentType: stringField(input, 'subagent_type') || 'subagent',
            prompt: stringField(input, 'prompt'),
            result: null,
          });
        }
      } else if (message.role === 'tool') {
        const delegation = delegations.get(message.tool_call_id);
        if (delegation && delegation.result === null) delegation.result = contentText(message.content);
      }
    }
  }
}

function parseArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return { prompt: text };
  }
}

function stringField(input: Record<string, unknown>, name: string): string {
  const value = input[name];
  return typeof value === 'string' ? value : '';
}

/**
 * The delegations as a numbered list, each prompt and report cut to a few lines, within `maxTokens`. Given the task's
 * text, a prompt shows what it asked beyond the task (`askedBeyondTask`), not a cut copy of the task.
 */
export function renderDelegations(
  counter: TokenCounter,
  delegations: Delegation[],
  maxTokens: number,
  taskText?: string,
): string {
  if (delegations.length === 0) return 'The orchestrator delegated nothing: it did the work alone.';
  const perDelegation = Math.max(48, Math.floor((maxTokens - 40) / delegations.length));
  const askedTokens = Math.floor(perDelegation * 0.4);
  const returnedTokens = perDelegation - askedTokens - 16;
  const items = delegations.map((delegation, index) => {
    const prompt = taskText === undefined ? delegation.prompt : askedBeyondTask(delegation.prompt, taskText);
    const asked = shrinkToTokens(counter, oneLine(prompt, 20_000), askedTokens, 0.8).text;
    const returned =
      delegation.result === null
        ? '(no report came back)'
        : shrinkToTokens(counter, oneLine(delegation.result, 40_000), returnedTokens, 0.5).text;
    const title = delegation.description ? ` “${oneLine(delegation.description, 120)}”` : '';
    return `${index + 1}. ${delegation.subagentType}${title}\n   asked: ${asked}\n   returned: ${returned}`;
  });
  const text = `${plural(delegations.length, 'delegation')} by the orchestrator, in order:\n${items.join('\n')}`;
  return shrinkToTokens(counter, text, maxTokens, 0.5).text;
}

function oneLine(text: string, maxCharacters: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > maxCharacters ? `${flat.slice(0, maxCharacters)}…` : flat;
}

function formatDuration(milliseconds: number): string {
  const seconds = Math.round(milliseconds / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** Rows of `egress.jsonl` read for the judge: far more than the table shows, far less than a flood. */
const MAX_EGRESS_ROWS = 20_000;
/** Destinations the judge's table lists. */
const MAX_EGRESS_DESTINATIONS = 15;

/** The episode's egress log, or undefined when the task allowed no network (no log, no counts in the record). */
export async function readEpisodeEgress(
  episodeDir: string,
  record: EpisodeRecord | undefined,
): Promise<EgressLogRead | undefined> {
  const read = await readEgressLog(episodePath(episodeDir, 'egressLog'), { maxRows: MAX_EGRESS_ROWS });
  return read.totalRows === 0 && read.skippedLines === 0 && record?.egress === undefined ? undefined : read;
}

/**
 * What the agents reached beyond the model: the task's allow-list and the counts from the record, and a compact
 * table of destinations (host, port, verdict, requests, failed requests, bytes) from the egress log.
 */
export function renderEgress(read: EgressLogRead, record: EpisodeRecord | undefined): string {
  const lines: string[] = [];
  const counts = record?.egress;
  if (counts) {
    lines.push(
      `Network beyond the model (the task allows ${counts.allow.join(', ')}): ${plural(counts.requestsAllowed, 'request')} allowed, ${formatCount(counts.requestsRefused)} refused; ${formatBytes(counts.bytesUp)} sent, ${formatBytes(counts.bytesDown)} received.`,
    );
  } else {
    lines.push(`Network beyond the model: ${plural(read.totalRows, 'request')} in the egress log.`);
  }
  const { destinations, more } = egressDestinations(read.rows, MAX_EGRESS_DESTINATIONS);
  if (destinations.length > 0) {
    lines.push(
      '| host | port | verdict | requests | failed | sent | received |',
      '| --- | --- | --- | --- | --- | --- | --- |',
    );
    for (const row of destinations) {
      lines.push(
        `| ${row.host} | ${row.port ?? ''} | ${row.verdict} | ${formatCount(row.requests)} | ${formatCount(row.failed)} | ${formatBytes(row.bytesUp)} | ${formatBytes(row.bytesDown)} |`,
      );
    }
    if (more > 0) lines.push(`(${plural(more, 'more destination')} not listed)`);
  }
  return lines.join('\n');
}
