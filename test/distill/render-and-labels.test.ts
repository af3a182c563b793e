import type { Template } from '@huggingface/jinja';
import { beforeAll, describe, expect, it } from 'vitest';

import {
  conversationsOfThread,
  querySegments,
  TokenCache,
  type ChatTemplateModel,
  type QuerySegment,
  type TrainingConversation,
} from '../../src/distill/index.js';
import type { Thread } from '../../src/records/threads.js';
import type { AssistantMessage } from '../../src/model/types.js';
import { qwen35Style, qwen35StyleReferenceTemplate } from './qwen35-style.js';
import {
  expectedOutput,
  expectedQwen35Output,
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

interface TemplateCase {
  name: string;
  load: () => Promise<ChatTemplateModel>;
  reference: () => Template;
  /** The template's generation prompt: context, never labelled. */
  generationPrompt: string;
  expected: (message: AssistantMessage, isLastMessage: boolean) => string;
}

const templates: TemplateCase[] = [
  {
    // Qwen3's prompt stops at the role line: the model writes `<think>` itself, and it is trained on.
    name: 'Qwen3',
    load: qwen3,
    reference: referenceTemplate,
    generationPrompt: '<|im_start|>assistant\n',
    expected: expectedOutput,
  },
  {
    // Qwen3.5/3.6 open the think block in the prompt: `<think>\n` is the template's, not the model's.
    name: 'the Qwen3.5-style fixture',
    load: qwen35Style,
    reference: qwen35StyleReferenceTemplate,
    generationPrompt: '<|im_start|>assistant\n<think>\n',
    expected: (message) => expectedQwen35Output(message),
  },
];

function segmentsOf(conversation: TrainingConversation, model: ChatTemplateModel): QuerySegment[] {
  const results = querySegments(conversation, model, new TokenCache(model), { verify: 'every-turn' });
  return results.map((result) => {
    if (!result.ok) throw new Error(result.error);
    return result.segment;
  });
}

describe.each(templates.flatMap((template) => recordedLogs.map((log) => ({ template, log }))))(
  'query segments with $template.name of $log.0',
  ({ template: templateCase, log: [, threadsOf] }) => {
    let model: ChatTemplateModel;
    let conversations: TrainingConversation[];

    beforeAll(async () => {
      model = await templateCase.load();
      conversations = threadsOf().flatMap(
        (thread) => conversationsOfThread(thread, { episodeId: 'e', taskId: 't' }).conversations,
      );
    });

    it('renders each segment exactly as the chat template renders the whole conversation, and tokenises it losslessly', () => {
      const template = templateCase.reference();
      let segments = 0;
      let toolCallingSegments = 0;
      for (const conversation of conversations) {
        for (const segment of segmentsOf(conversation, model)) {
          segments++;
          const messages = conversation.messages.slice(0, segment.endMessageIndex);
          if (messages.some((message) => message.role === 'assistant' && message.tool_calls?.length)) {
            toolCallingSegments++;
          }
          const reference = template.render({
            messages: templateInput(messages),
            tools: conversation.tools,
            add_generation_prompt: false,
          });
          expect(segment.text).toBe(reference);
          const blocks = [...segment.header, ...segment.blocks];
          expect(blocks.map((block) => block.text).join('')).toBe(reference);
          expect(model.decode(blocks.flatMap((block) => block.ids))).toBe(reference.normalize('NFC'));
          // The text is tokenised in pieces cut where the model started writing (after each trained turn's
          // generation prompt): the prompt the model was served ended there, so its first token starts there.
          let offset = 0;
          const cuts = blocks.flatMap((block) => {
            const at = offset;
            offset += block.text.length;
            return block.supervised ? [at + templateCase.generationPrompt.length] : [];
          });
          const pieces = [0, ...cuts].map((from, index) => reference.slice(from, cuts[index]));
          expect(blocks.flatMap((block) => block.ids)).toEqual(
            pieces.flatMap((piece) => model.encode(piece)),
          );
        }
      }
      expect(segments).toBeGreaterThanOrEqual(3);
      expect(toolCallingSegments).toBeGreaterThanOrEqual(2);
    });

    it('labels exactly the assistant outputs of each segment after the generation prompt, and nothing else', () => {
      for (const conversation of conversations) {
        for (const segment of segmentsOf(conversation, model)) {
          expect(segment.header.every((block) => block.supervised === null)).toBe(true);
          const trained = segment.blocks.filter((block) => block.supervised !== null);
          expect(trained.map((block) => block.messageIndex)).toEqual(conversation.targets);
          for (const block of trained) {
            const message = conversation.messages[block.messageIndex!] as AssistantMessage;
            const { from, to } = block.supervised!;
            expect(model.decode(block.ids.slice(0, from))).toBe(templateCase.generationPrompt);
            const output = model.decode(block.ids.slice(from, to));
            expect(output).toBe(
              templateCase
                .expected(message, block.messageIndex === segment.endMessageIndex - 1)
                .normalize('NFC'),
            );
            expect(output.endsWith('<|im_end|>')).toBe(true);
            if (message.reasoning_content) expect(output).toContain(message.reasoning_content.trim());
          }
        }
      }
    });
  },
);
