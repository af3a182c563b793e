import type { ChatTemplateModel } from './chat-template-model.js';
import { assistantParts, splitTurns, type RenderedBlock } from './chatml-blocks.js';
import { toTemplateMessage, type TemplateMessage } from './template-messages.js';
import type { TokenCache } from './token-cache.js';
import type { TrainingConversation } from './training-conversation.js';

/** One turn of the rendered conversation, tokenised. */
export interface TokenBlock {
  text: string;
  ids: number[];
  /** Token range `[from, to)` of the model's output inside `ids`; null for context. */
  supervised: { from: number; to: number } | null;
  /** The assistant message the block renders; null for any other block. */
  messageIndex: number | null;
  /** The user message that opens the query segment (only for segments after the first). */
  isQuery: boolean;
}

/**
 * A user query and the assistant and tool turns that answer it, rendered with everything before it as context.
 * Qwen3's template keeps reasoning only after the last user query, so each query is rendered on its own.
 */
export interface QuerySegment {
  /** Which query of the conversation (0 for the first user message). */
  index: number;
  queryMessageIndex: number;
  /** The segment's messages end before this index. */
  endMessageIndex: number;
  /** The template's render of the conversation up to the end of this segment. */
  text: string;
  /** The system prompt (with the tools) and the first user message. */
  header: TokenBlock[];
  /** Every later turn; only this segment's targets carry supervised ranges. */
  blocks: TokenBlock[];
  /** The assistant messages trained on in this segment. */
  targets: number[];
}

export type QuerySegmentResult =
  | { ok: true; segment: QuerySegment }
  | { ok: false; index: number; queryMessageIndex: number; error: string };

export interface QuerySegmentOptions {
  /**
   * `final-turn` (default) proves the split on the segment's last trained turn by rendering the conversation up to it;
   * `every-turn` does so for every trained turn (one render each: quadratic, for tests and audits).
   */
  verify?: 'final-turn' | 'every-turn';
}

/**
 * The conversation split into user-query segments that have something to learn, each rendered by the model's
 * chat template, cut into turns and tokenised turn by turn. Verified by construction: the blocks' text is the
 * render; each trained turn's output holds its message's text and tool calls; and rendering the conversation up
 * to a trained turn gives exactly the text before that turn's block.
 */
export function querySegments(
  conversation: TrainingConversation,
  model: ChatTemplateModel,
  tokens: TokenCache,
  options: QuerySegmentOptions = {},
): QuerySegmentResult[] {
  const messages = conversation.messages.map(toTemplateMessage);
  const queries = messages.flatMap((message, index) => (message.role === 'user' ? [index] : []));
  const results: QuerySegmentResult[] = [];
  for (const [index, queryMessageIndex] of queries.entries()) {
    const endMessageIndex = queries[index + 1] ?? messages.length;
    const segmentTargets = conversation.targets.filter(
      (target) => target > queryMessageIndex && target < endMessageIndex,
    );
    if (segmentTargets.length === 0) continue;
    try {
      results.push({
        ok: true,
        segment: renderSegment(messages, conversation.tools, model, tokens, {
          index,
          queryMessageIndex,
          endMessageIndex,
          targets: segmentTargets,
          verify: options.verify ?? 'final-turn',
        }),
      });
    } catch (error) {
      if (!(error instanceof RenderMismatch)) throw error;
      results.push({ ok: false, index, queryMessageIndex, error: error.message });
    }
  }
  return results;
}

class RenderMismatch extends Error {}

interface SegmentSpec {
  index: number;
  queryMessageIndex: number;
  endMessageIndex: number;
  targets: number[];
  verify: 'final-turn' | 'every-turn';
}

function renderSegment(
  allMessages: TemplateMessage[],
  tools: readonly unknown[],
  model: ChatTemplateModel,
  tokens: TokenCache,
  spec: SegmentSpec,
): QuerySegment {
  const messages = allMessages.slice(0, spec.endMessageIndex);
  const render = (upTo: number): string => {
    try {
      return model.render(messages.slice(0, upTo), tools);
    } catch (error) {
      throw new RenderMismatch(
        `the chat template failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  };
  const text = render(messages.length);
  const rendered = splitTurns(text);
  const assistantIndices = messages.flatMap((message, index) =>
    message.role === 'assistant' ? [index] : [],
  );
  const assistantBlocks = rendered.filter((block) => block.role === 'assistant');
  if (assistantBlocks.length !== assistantIndices.length) {
    throw new RenderMismatch(
      `the render has ${assistantBlocks.length} assistant turns for ${assistantIndices.length} assistant messages (a message holding a turn marker?)`,
    );
  }
  const messageOfBlock = new Map(assistantBlocks.map((block, order) => [block, assistantIndices[order]!]));
  const headerEnd = rendered.findIndex((block) => block.role === 'user');
  if (headerEnd < 0 || rendered.slice(0, headerEnd).some((block) => block.role === 'assistant')) {
    throw new RenderMismatch('the render has no user turn before the first assistant turn');
  }
  const targetSet = new Set(spec.targets);
  const firstAnswer = assistantIndices.find((index) => index > spec.queryMessageIndex);
  const firstAnswerBlock = rendered.findIndex((block) => messageOfBlock.get(block) === firstAnswer);

  const blocks = rendered.map((block, blockIndex): TokenBlock => {
    const messageIndex = messageOfBlock.get(block) ?? null;
    if (messageIndex !== null && targetSet.has(messageIndex)) {
      return targetBlock(block, allMessages[messageIndex]!, messageIndex, tokens);
    }
    return {
      text: block.text,
      ids: tokens.encode(block.text),
      supervised: null,
      messageIndex,
      isQuery: spec.index > 0 && blockIndex === firstAnswerBlock - 1 && block.role === 'user',
    };
  });

  const verifiedTurns = spec.verify === 'every-turn' ? spec.targets : [spec.targets.at(-1)!];
  for (const messageIndex of verifiedTurns) {
    if (messages[messageIndex - 1]?.role === 'assistant') continue;
    const before = render(messageIndex);
    const block = rendered.find((candidate) => messageOfBlock.get(candidate) === messageIndex)!;
    if (block.offset !== before.length || !text.startsWith(before)) {
      throw new RenderMismatch(
        `rendering up to message ${messageIndex} does not end where its turn starts in the whole render`,
      );
    }
  }
  return {
    index: spec.index,
    queryMessageIndex: spec.queryMessageIndex,
    endMessageIndex: spec.endMessageIndex,
    text,
    header: blocks.slice(0, headerEnd + 1),
    blocks: blocks.slice(headerEnd + 1),
    targets: spec.targets,
  };
}

function targetBlock(
  block: RenderedBlock,
  message: TemplateMessage,
  messageIndex: number,
  tokens: TokenCache,
): TokenBlock {
  const parts = assistantParts(block.text);
  if (!parts)
    throw new RenderMismatch(`the turn of message ${messageIndex} has no assistant head or end marker`);
  const expected = [
    message.content.trim(),
    ...(message.tool_calls ?? []).map((call) => call.function.name),
  ].filter((fragment) => fragment !== '');
  const missing = expected.find((fragment) => !parts.output.includes(fragment));
  if (missing !== undefined) {
    throw new RenderMismatch(
      `the turn of message ${messageIndex} does not hold its own text ${JSON.stringify(missing.slice(0, 60))}`,
    );
  }
  const head = tokens.encode(parts.head);
  const output = tokens.encode(parts.output);
  const tail = tokens.encode(parts.tail);
  return {
    text: block.text,
    ids: [...head, ...output, ...tail],
    supervised: { from: head.length, to: head.length + output.length },
    messageIndex,
    isQuery: false,
  };
}
