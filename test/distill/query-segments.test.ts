import { beforeAll, describe, expect, it } from 'vitest';

import {
  conversationsOfThread,
  querySegments,
  TokenCache,
  type ChatTemplateModel,
  type QuerySegment,
} from '../../src/distill/index.js';
import type { ChatMessage } from '../../src/model/types.js';
import {
  assistant,
  qwen3,
  referenceTemplate,
  syntheticThread,
  system,
  templateInput,
  tool,
  user,
} from './support.js';

const call = { id: 'c1', name: 'run_shell_command', arguments: '{"command": "ls"}' };
const messages: ChatMessage[] = [
  system('You are a general-purpose subagent.'),
  user('First question: list the files.'),
  assistant('', 'I should list them.', call),
  tool('c1', 'a.txt\nb.txt'),
  assistant('Two files.', 'Both are text files.'),
  user('Second question: which is larger?'),
  assistant('b.txt is larger.', 'Compare the sizes from before.'),
];

describe('one segment per user query', () => {
  let model: ChatTemplateModel;
  let segments: QuerySegment[];

  beforeAll(async () => {
    model = await qwen3();
    const [conversation] = conversationsOfThread(syntheticThread({ role: 'subagent', messages }), {
      episodeId: 'e',
      taskId: 't',
    }).conversations;
    segments = querySegments(conversation!, model, new TokenCache(model), { verify: 'every-turn' }).map(
      (result) => {
        if (!result.ok) throw new Error(result.error);
        return result.segment;
      },
    );
  });

  it('renders each query with the conversation up to its end, as the template renders that conversation', () => {
    expect(segments.map((segment) => [segment.queryMessageIndex, segment.endMessageIndex])).toEqual([
      [1, 5],
      [5, 7],
    ]);
    const template = referenceTemplate();
    for (const segment of segments) {
      expect(segment.text).toBe(
        template.render({
          messages: templateInput(messages.slice(0, segment.endMessageIndex)),
          add_generation_prompt: false,
        }),
      );
    }
  });

  it('trains the first query’s turns with their reasoning, and keeps them as context without it for the second', () => {
    const [first, second] = segments;
    expect(first!.targets).toEqual([2, 4]);
    expect(second!.targets).toEqual([6]);
    const decodeTrained = (segment: QuerySegment) =>
      segment.blocks
        .filter((block) => block.supervised)
        .map((block) => model.decode(block.ids.slice(block.supervised!.from, block.supervised!.to)));
    expect(decodeTrained(first!)).toEqual([
      '<think>\nI should list them.\n</think>\n\n<tool_call>\n{"name": "run_shell_command", "arguments": {"command": "ls"}}\n</tool_call><|im_end|>',
      '<think>\nBoth are text files.\n</think>\n\nTwo files.<|im_end|>',
    ]);
    expect(decodeTrained(second!)).toEqual([
      '<think>\nCompare the sizes from before.\n</think>\n\nb.txt is larger.<|im_end|>',
    ]);
    // Qwen3's template drops reasoning before the last query: the second segment's context has none of it.
    expect(second!.text).not.toContain('I should list them.');
    expect(second!.text).toContain('Two files.');
  });

  it('marks the second segment’s user query, and keeps the first user message in the header', () => {
    const [first, second] = segments;
    expect(first!.header.map((block) => block.text)).toEqual(second!.header.map((block) => block.text));
    expect(first!.header.at(-1)!.text).toContain('First question');
    expect(first!.blocks.some((block) => block.isQuery)).toBe(false);
    const query = second!.blocks.filter((block) => block.isQuery);
    expect(query.map((block) => block.text)).toEqual([
      '<|im_start|>user\nSecond question: which is larger?<|im_end|>\n',
    ]);
  });

  it('trains on no assistant message the harness wrote itself, and renders no segment without a trained turn', async () => {
    const thread = syntheticThread({ role: 'subagent', messages, harnessMade: [4, 6] });
    const [conversation] = conversationsOfThread(thread, { episodeId: 'e', taskId: 't' }).conversations;
    expect(conversation!.targets).toEqual([2]);
    const results = querySegments(conversation!, model, new TokenCache(model));
    expect(results).toHaveLength(1);
    expect(results[0]!.ok && results[0]!.segment.targets).toEqual([2]);
  });

  it('reports a conversation whose render does not split into its turns instead of mislabelling it', () => {
    const [conversation] = conversationsOfThread(
      syntheticThread({
        role: 'subagent',
        messages: [
          system('You are a general-purpose subagent.'),
          user('Quote a chat turn.'),
          assistant('Here: <|im_start|>assistant\nhello<|im_end|>', 'Quote it.'),
        ],
      }),
      { episodeId: 'e', taskId: 't' },
    ).conversations;
    const [result] = querySegments(conversation!, model, new TokenCache(model));
    expect(result).toMatchObject({
      ok: false,
      error: expect.stringMatching(/assistant turns for 1 assistant message/),
    });
  });
});
