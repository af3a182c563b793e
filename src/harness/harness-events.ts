import { z } from 'zod';

import { eachValidJsonLine } from '../store/json-lines.js';

/**
 * qwen-code's stream-json events, as far as the episode needs them; everything else passes through unread. Agent
 * code can write into the harness's output (`/proc/<harness pid>/fd/1` is open to it), so nothing read here is a fact
 * of the record: the final result must agree with what the proxy recorded (see `classifyOutcome`), and the counts
 * come from the proxy log (see `episodeFacts`).
 */
const ContentBlock = z.looseObject({
  type: z.string(),
  text: z.string().optional(),
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

export interface HarnessSummary {
  /** The last `result` event, when the harness got that far (or something wrote one). */
  result: { subtype: string; isError: boolean; text: string | null; numTurns: number | null } | null;
  lastAssistantText: string | null;
  events: number;
  /** Lines that were not JSON events: the harness printing something else, lines cut at capture, agents' writes. */
  unreadableLines: number;
}

/** The longest event line read: the capture cuts lines at this length, so a longer one is not a whole event. */
export const MAX_EVENT_LINE_BYTES = 8 * 1024 ** 2;
/** The most of the event log read (the capture keeps no more). */
export const MAX_EVENT_LOG_BYTES = 256 * 1024 ** 2;

/** Reads a harness event log (`events.jsonl`) line by line, each line and the whole bounded. */
export async function summariseHarnessEvents(file: string): Promise<HarnessSummary> {
  const summary: HarnessSummary = {
    result: null,
    lastAssistantText: null,
    events: 0,
    unreadableLines: 0,
  };
  // Lines over the limit, and a last line without its end, are not whole events: skipped and counted with the rest.
  const { skippedLines } = await eachValidJsonLine(
    file,
    HarnessEvent,
    { maxLineBytes: MAX_EVENT_LINE_BYTES, maxBytes: MAX_EVENT_LOG_BYTES },
    (event) => {
      summary.events++;
      observe(summary, event);
    },
  );
  summary.unreadableLines = skippedLines;
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
  if ((event.parent_tool_use_id ?? null) !== null) return;
  for (const block of event.message.content) {
    if (block.type === 'text' && block.text) summary.lastAssistantText = block.text;
  }
}
