import { beforeAll, describe, expect, it } from 'vitest';

import {
  conversationsOfThread,
  querySegments,
  TokenCache,
  type ChatTemplateModel,
  type QuerySegment,
  type TrainingConversation,
} from '../../src/distill/index.js';
import type { Thread } from '../../src/episode/threads.js';
import type { AssistantMessage } from '../../src/model/types.js';
import {
  expectedOutput,
  qwen3,
  qwenCodeThreads,
  readThreads,
  referenceTemplate,
  templateInput,
} from './support.js';

const recordedLogs: Array<[string, () => Thread[]]> = [
  ['a team episode with a workflow and the teacher directive (tiny-sum)', () => readThreads('team-a')],
  ['the qwen-code 0.24.4 log (orchestrator and two subagents)', qwenCodeThreads],
];

function segmentsOf(conversation: TrainingConversation, model: ChatTemplateModel): QuerySegment[] {
  const results = querySegments(conversation, model, new TokenCache(model), { verify: 'every-turn' });
  return results.map((result) => {
    if (!result.ok) throw new Error(result.error);
    return result.segment;
  });
}

describe.each(recordedLogs)('query segments of %s', (_name, threadsOf) => {
  let model: ChatTemplateModel;
  let conversations: TrainingConversation[];

  beforeAll(async () => {
    model = await qwen3();
    conversations = threadsOf().flatMap(
      (thread) => conversationsOfThread(thread, { episodeId: 'e', taskId: 't' }).conversations,
    );
  });

  it('renders each segment exactly as the chat template renders the whole conversation, and tokenises it losslessly', () => {
    const template = referenceTemplate();
    let segments = 0;
    for (const conversation of conversations) {
      for (const segment of segmentsOf(conversation, model)) {
        segments++;
        const reference = template.render({
          messages: templateInput(conversation.messages.slice(0, segment.endMessageIndex)),
          tools: conversation.tools,
          add_generation_prompt: false,
        });
        expect(segment.text).toBe(reference);
        const blocks = [...segment.header, ...segment.blocks];
        expect(blocks.map((block) => block.text).join('')).toBe(reference);
        expect(model.decode(blocks.flatMap((block) => block.ids))).toBe(reference.normalize('NFC'));
        // Turn by turn is how the builder tokenises; the whole text at once gives the same ids.
        expect(blocks.flatMap((block) => block.ids)).toEqual(model.encode(reference));
      }
    }
    expect(segments).toBeGreaterThanOrEqual(3);
  });

  it('labels exactly the assistant outputs of each segment, reasoning included, and nothing else', () => {
    for (const conversation of conversations) {
      for (const segment of segmentsOf(conversation, model)) {
        expect(segment.header.every((block) => block.supervised === null)).toBe(true);
        const trained = segment.blocks.filter((block) => block.supervised !== null);
        expect(trained.map((block) => block.messageIndex)).toEqual(conversation.targets);
        for (const block of trained) {
          const message = conversation.messages[block.messageIndex!] as AssistantMessage;
          const output = model.decode(block.ids.slice(block.supervised!.from, block.supervised!.to));
          expect(output).toBe(
            expectedOutput(message, block.messageIndex === segment.endMessageIndex - 1).normalize('NFC'),
          );
          expect(output.endsWith('<|im_end|>')).toBe(true);
          if (message.reasoning_content) expect(output).toContain(message.reasoning_content);
        }
      }
    }
  });
});
