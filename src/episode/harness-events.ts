import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

import { z } from 'zod';

import { DELEGATION_TOOL } from '../harness/qwen-code.js';

/** qwen-code's stream-json events, as far as the episode needs them; everything else passes through unread. */
const ContentBlock = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
  name: z.string().optional(),
  input: z.unknown().optional(),
});
const HarnessEvent = z.looseObject({
  type: z.string(),
  subtype: z.string().optional(),
  parent_tool_use_id: z.string().nullish(),
  is_error: z.boolean().optional(),
  result: z.unknown().optional(),
  num_turns: z.number().optional(),
  message: z.looseObject({ content: z.union([z.string(), z.array(ContentBlock)]).optional() }).optional(),
});

export interface ToolCallSummary {
  name: string;
  /** The call's input as JSON, cut to 300 characters. */
  input: string;
  /** The delegation this call ran under; null for the orchestrator's own calls. */
  parentToolUseId: string | null;
}

export interface HarnessSummary {
  /** The final `result` event, when the harness got that far. */
  result: { subtype: string; isError: boolean; text: string | null; numTurns: number | null } | null;
  /** `agent` tool calls made by the orchestrator. */
  delegations: number;
  /** The last tool calls, newest last, for diagnosing a failure. */
  lastToolCalls: ToolCallSummary[];
  lastAssistantText: string | null;
  events: number;
  /** Lines that were not JSON events (the harness printing something else on stdout). */
  unreadableLines: number;
}

const LAST_TOOL_CALLS = 8;

/** Reads a harness event log (`events.jsonl`) line by line, however large. */
export async function summariseHarnessEvents(file: string): Promise<HarnessSummary> {
  const summary: HarnessSummary = {
    result: null,
    delegations: 0,
    lastToolCalls: [],
    lastAssistantText: null,
    events: 0,
    unreadableLines: 0,
  };
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      summary.unreadableLines++;
      continue;
    }
    const event = HarnessEvent.safeParse(parsed);
    if (!event.success) {
      summary.unreadableLines++;
      continue;
    }
    summary.events++;
    observe(summary, event.data);
  }
  return summary;
}

function observe(summary: HarnessSummary, event: z.infer<typeof HarnessEvent>): void {
  if (event.type === 'result') {
    summary.result = {
      subtype: event.subtype ?? 'unknown',
      isError: event.is_error ?? false,
      text: typeof event.result === 'string' ? event.result : null,
      numTurns: event.num_turns ?? null,
    };
    return;
  }
  if (event.type !== 'assistant' || !Array.isArray(event.message?.content)) return;
  const parent = event.parent_tool_use_id ?? null;
  for (const block of event.message.content) {
    if (block.type === 'text' && block.text && parent === null) summary.lastAssistantText = block.text;
    if (block.type !== 'tool_use' || !block.name) continue;
    if (block.name === DELEGATION_TOOL && parent === null) summary.delegations++;
    summary.lastToolCalls.push({
      name: block.name,
      input: JSON.stringify(block.input ?? null).slice(0, 300),
      parentToolUseId: parent,
    });
    if (summary.lastToolCalls.length > LAST_TOOL_CALLS) summary.lastToolCalls.shift();
  }
}
