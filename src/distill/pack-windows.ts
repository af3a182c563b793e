import type { QuerySegment } from './query-segments.js';

/** Label of a token the loss ignores (PyTorch's cross-entropy default). */
export const IGNORE_INDEX = -100;

export interface WindowLimits {
  /** Tokens per window (default 49,152). */
  windowTokens: number;
  /** Masked context tokens between the header and a window's first block (default 8,192). */
  maxContextTokens: number;
  /** The header may take at most this share of a window (default 0.9). */
  maxHeaderFraction: number;
}

export const DEFAULT_WINDOW_LIMITS: WindowLimits = {
  windowTokens: 49_152,
  maxContextTokens: 8_192,
  maxHeaderFraction: 0.9,
};

/** Which blocks of a query segment one window holds, and its exact token counts. */
export interface WindowLayout {
  /** Indices of `segment.blocks` shown before the body as masked context, in order. */
  context: number[];
  /** The window's own blocks, `segment.blocks[from, to)`: starting and ending with a trained turn. */
  body: { from: number; to: number };
  tokens: { header: number; context: number; body: number; total: number };
  supervisedTokens: number;
  /** The assistant messages trained on in this window. */
  targets: number[];
}

export interface SkippedTurn {
  messageIndex: number;
  tokens: number;
  supervisedTokens: number;
}

export type WindowPlan =
  | { ok: true; windows: WindowLayout[]; skippedTurns: SkippedTurn[] }
  | { ok: false; headerTokens: number; error: string };

/**
 * Cuts a query segment into windows: the masked header (system prompt and first user message, at most
 * `maxHeaderFraction` of the window), then up to `maxContextTokens` of masked context (whole turns just before the
 * window's first trained turn, and the segment's user query when it fits), then whole turns up to the last trained
 * turn that fits. The next window starts at the next trained turn, so every trained turn is in exactly one window;
 * a turn too long for a window on its own is skipped and reported.
 */
export function planWindows(segment: QuerySegment, limits: WindowLimits): WindowPlan {
  const headerTokens = segment.header.reduce((sum, block) => sum + block.ids.length, 0);
  if (headerTokens > limits.maxHeaderFraction * limits.windowTokens) {
    return {
      ok: false,
      headerTokens,
      error: `the header (system prompt and first user message) has ${headerTokens} tokens, more than ${limits.maxHeaderFraction} of the ${limits.windowTokens}-token window`,
    };
  }
  const room = limits.windowTokens - headerTokens;
  const lengths = segment.blocks.map((block) => block.ids.length);
  const supervisedLength = segment.blocks.map((block) =>
    block.supervised ? block.supervised.to - block.supervised.from : 0,
  );
  const queryBlock = segment.blocks.findIndex((block) => block.isQuery);
  const windows: WindowLayout[] = [];
  const skippedTurns: SkippedTurn[] = [];

  let start = 0;
  while (start < lengths.length) {
    if (segment.blocks[start]!.supervised === null) {
      start++;
      continue;
    }
    if (lengths[start]! > room) {
      skippedTurns.push({
        messageIndex: segment.blocks[start]!.messageIndex!,
        tokens: lengths[start]!,
        supervisedTokens: supervisedLength[start]!,
      });
      start++;
      continue;
    }
    const context = chooseContext(
      lengths,
      start,
      queryBlock,
      Math.min(limits.maxContextTokens, room - lengths[start]!),
    );
    const contextTokens = context.reduce((sum, index) => sum + lengths[index]!, 0);
    const budget = room - contextTokens;
    let used = 0;
    let lastTrained = start;
    for (let index = start; index < lengths.length && used + lengths[index]! <= budget; index++) {
      used += lengths[index]!;
      if (segment.blocks[index]!.supervised !== null) lastTrained = index;
    }
    const end = lastTrained + 1;
    let bodyTokens = 0;
    let supervisedTokens = 0;
    const targets: number[] = [];
    for (let index = start; index < end; index++) {
      bodyTokens += lengths[index]!;
      supervisedTokens += supervisedLength[index]!;
      if (segment.blocks[index]!.supervised !== null) targets.push(segment.blocks[index]!.messageIndex!);
    }
    windows.push({
      context,
      body: { from: start, to: end },
      tokens: {
        header: headerTokens,
        context: contextTokens,
        body: bodyTokens,
        total: headerTokens + contextTokens + bodyTokens,
      },
      supervisedTokens,
      targets,
    });
    start = end;
  }
  return { ok: true, windows, skippedTurns };
}

/** The most recent whole turns before `start` within `budget`, with the query first when it fits too. */
function chooseContext(lengths: number[], start: number, queryBlock: number, budget: number): number[] {
  const chosen: number[] = [];
  let used = 0;
  for (let index = start - 1; index >= 0 && used + lengths[index]! <= budget; index--) {
    chosen.unshift(index);
    used += lengths[index]!;
  }
  // `chosen` runs up to `start - 1`, so the query is in it exactly when it does not begin after the query.
  const queryLeftOut =
    queryBlock >= 0 && queryBlock < start && !(chosen.length > 0 && chosen[0]! <= queryBlock);
  if (queryLeftOut && lengths[queryBlock]! <= budget) {
    while (used + lengths[queryBlock]! > budget) used -= lengths[chosen.shift()!]!;
    chosen.unshift(queryBlock);
  }
  return chosen;
}

/** The window's token ids and labels: the model's own output where trained, `IGNORE_INDEX` everywhere else. */
export function windowTokens(
  segment: QuerySegment,
  layout: WindowLayout,
): { inputIds: number[]; labels: number[] } {
  const inputIds = new Array<number>(layout.tokens.total);
  const labels = new Array<number>(layout.tokens.total).fill(IGNORE_INDEX);
  let position = 0;
  const copy = (ids: number[], from = 0, to = 0) => {
    for (let offset = 0; offset < ids.length; offset++, position++) {
      inputIds[position] = ids[offset]!;
      if (offset >= from && offset < to) labels[position] = ids[offset]!;
    }
  };
  for (const block of segment.header) copy(block.ids);
  for (const index of layout.context) copy(segment.blocks[index]!.ids);
  for (let index = layout.body.from; index < layout.body.to; index++) {
    const block = segment.blocks[index]!;
    copy(block.ids, block.supervised?.from, block.supervised?.to);
  }
  return { inputIds, labels };
}
