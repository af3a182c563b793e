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
   * `final-turn` (default) proves the split on the segment's last trained turn by rendering the conversation up to it
   * with the generation prompt;
   * `every-turn` does so for every trained turn (one render each: quadratic, for tests and audits).
   */
  verify?: 'final-turn' | 'every-turn';
}

/**
 * The conversation split into user-query segments that have something to learn, each rendered by the model's
 * chat template, cut into turns and tokenised turn by turn. Verified by construction: the blocks' text is the
 * render; each trained turn's output holds its message's text and tool calls; and rendering the conversation up
 * to a trained turn with the generation prompt gives exactly the text before that turn's labels: a trained turn's
 * labels are what the model wrote after the prompt it was served.
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
  const render = (upTo: number, addGenerationPrompt = false): string => {
    try {
      return model.render(messages.slice(0, upTo), tools, { addGenerationPrompt });
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
  const blockOfMessage = new Map(assistantBlocks.map((block, order) => [assistantIndices[order]!, block]));
  const headerEnd = rendered.findIndex((block) => block.role === 'user');
  if (headerEnd < 0 || rendered.slice(0, headerEnd).some((block) => block.role === 'assistant')) {
    throw new RenderMismatch('the render has no user turn before the first assistant turn');
  }
  const generationPrompt = verifiedGenerationPrompt(spec, messages, text, blockOfMessage, render);
  const targetSet = new Set(spec.targets);
  const firstAnswer = assistantIndices.find((index) => index > spec.queryMessageIndex);
  const firstAnswerBlock = rendered.findIndex((block) => messageOfBlock.get(block) === firstAnswer);

  const blocks = rendered.map((block, blockIndex): TokenBlock => {
    const messageIndex = messageOfBlock.get(block) ?? null;
    if (messageIndex !== null && targetSet.has(messageIndex)) {
      return targetBlock(block, allMessages[messageIndex]!, messageIndex, generationPrompt, tokens);
    }
    return {
      text: block.text,
      ids: tokens.encode(block.text),
      supervised: null,
      messageIndex,
      isQuery: spec.index > 0 && blockIndex === firstAnswerBlock - 1 && block.role === 'user',
    };
  });
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

/**
 * The template's generation prompt: what the server appended to the conversation before the model wrote a trained
 * turn, found by rendering the conversation up to that turn with `add_generation_prompt` (Qwen3:
 * `<|im_start|>assistant\n`, the model writes `<think>` itself; Qwen3.5/3.6: `<|im_start|>assistant\n<think>\n`,
 * the template's). Labels start right after it. Proven on the segment's last trained turn (every trained turn with
 * `every-turn`): that render must be exactly the whole render's text up to a point inside the turn's block.
 */
function verifiedGenerationPrompt(
  spec: SegmentSpec,
  messages: TemplateMessage[],
  text: string,
  blockOfMessage: Map<number, RenderedBlock>,
  render: (upTo: number, addGenerationPrompt?: boolean) => string,
): string {
  // A turn right after another assistant turn was not a request of its own: there is no prompt to compare.
  const answers = spec.targets.filter((target) => messages[target - 1]?.role !== 'assistant');
  const verifiedTurns = spec.verify === 'every-turn' ? answers : answers.slice(-1);
  let generationPrompt: string | undefined;
  for (const messageIndex of verifiedTurns) {
    const prompt = render(messageIndex, true);
    const block = blockOfMessage.get(messageIndex)!;
    const head = prompt.slice(block.offset);
    if (!text.startsWith(prompt) || prompt.length <= block.offset || !block.text.startsWith(head)) {
      throw new RenderMismatch(
        `rendering up to message ${messageIndex} with the generation prompt does not give the whole render's text up to inside that turn`,
      );
    }
    if (generationPrompt !== undefined && head !== generationPrompt) {
      throw new RenderMismatch(
        `the generation prompt differs between trained turns (${JSON.stringify(generationPrompt)}, then ${JSON.stringify(head)} before message ${messageIndex})`,
      );
    }
    generationPrompt = head;
  }
  if (generationPrompt !== undefined) return generationPrompt;
  // No trained turn follows a request of its own: the prompt after the segment's query, compared by difference.
  const upTo = spec.queryMessageIndex + 1;
  const before = render(upTo);
  const prompt = render(upTo, true);
  if (!prompt.startsWith(before)) {
    throw new RenderMismatch(
      `the generation prompt after message ${spec.queryMessageIndex} rewrites the text before it`,
    );
  }
  return prompt.slice(before.length);
}

function targetBlock(
  block: RenderedBlock,
  message: TemplateMessage,
  messageIndex: number,
  generationPrompt: string,
  tokens: TokenCache,
): TokenBlock {
  const parts = assistantParts(block.text, generationPrompt);
  if (!parts) {
    throw new RenderMismatch(
      `the turn of message ${messageIndex} does not start with the template's generation prompt ${JSON.stringify(generationPrompt)} or has no end marker after it`,
    );
  }
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
