import { beforeAll, describe, expect, it } from 'vitest';

import {
  conversationsOfThread,
  querySegments,
  TokenCache,
  type ChatTemplateModel,
  type EpisodeSource,
  type QuerySegment,
} from '../../src/distill/index.js';
import type { ChatMessage } from '../../src/model/types.js';
import { qwen35Style } from './qwen35-style.js';
import { assistant, collect, qwen3, supervisedRuns, syntheticThread, system, tool, user } from './support.js';

const messages: ChatMessage[] = [
  system('You are a general-purpose subagent.'),
  user('First question: list the files.'),
  assistant('', 'I should list them.', {
    id: 'c1',
    name: 'run_shell_command',
    arguments: '{"command":"ls -S","timeout":30,"flags":{"all":true}}',
  }),
  tool('c1', 'b.txt\na.txt'),
  assistant('Two files.', 'Both are text files.'),
  user('Second question: which is larger?'),
  assistant('b.txt is larger.'),
];

function episodeOf(threadMessages: ChatMessage[]): EpisodeSource {
  return {
    episodeId: 'e',
    taskId: 't',
    split: 'train',
    team: false,
    prompt: '',
    bareTask: '',
    threads: [syntheticThread({ role: 'subagent', messages: threadMessages, id: 'sub' })],
  };
}

describe('the Qwen3.5-style template', () => {
  let model: ChatTemplateModel;
  let segments: QuerySegment[];

  beforeAll(async () => {
    model = await qwen35Style();
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

  it('renders tool calls from their arguments as a mapping, and labels what follows the template’s <think>', () => {
    const trained = (segment: QuerySegment) =>
      segment.blocks
        .filter((block) => block.supervised)
        .map((block) => [
          model.decode(block.ids.slice(0, block.supervised!.from)),
          model.decode(block.ids.slice(block.supervised!.from, block.supervised!.to)),
        ]);
    const prompt = '<|im_start|>assistant\n<think>\n';
    expect(trained(segments[0]!)).toEqual([
      [
        prompt,
        'I should list them.\n</think>\n\n<tool_call>\n<function=run_shell_command>\n' +
          '<parameter=command>\nls -S\n</parameter>\n<parameter=timeout>\n30\n</parameter>\n' +
          '<parameter=flags>\n{"all": true}\n</parameter>\n</function>\n</tool_call><|im_end|>',
      ],
      [prompt, 'Both are text files.\n</think>\n\nTwo files.<|im_end|>'],
    ]);
    expect(trained(segments[1]!)).toEqual([[prompt, '\n</think>\n\nb.txt is larger.<|im_end|>']]);
    // Reasoning before the last query is dropped, and so is the think block around it.
    expect(segments[1]!.text).not.toContain('I should list them.');
    expect(segments[1]!.text).toContain('<|im_start|>assistant\nTwo files.<|im_end|>');
  });

  it('uses the fixture’s own special tokens, and the windows never label the template’s <think>', async () => {
    const [imStart, think] = [model.encode('<|im_start|>'), model.encode('<think>')];
    expect(imStart).toEqual([151648]);
    expect(think).toEqual([151650]);
    expect((await qwen3()).encode('<|im_start|>')).toEqual([151644]);
    const { windows } = await collect([episodeOf(messages)], { model });
    expect(windows).toHaveLength(2);
    for (const window of windows) {
      window.input_ids.forEach((id, index) => {
        if (id === think[0]) expect(window.labels[index]).toBe(-100);
      });
      for (const run of supervisedRuns(window, (ids) => model.decode(ids))) {
        expect(run.startsWith('<think>')).toBe(false);
        expect(run.endsWith('<|im_end|>')).toBe(true);
      }
    }
  });

  it('finds the generation prompt after the query when every trained turn follows another assistant turn', () => {
    const thread = syntheticThread({
      role: 'subagent',
      messages: [
        system('You are a general-purpose subagent.'),
        user('Say hello.'),
        assistant('(the harness wrote this)'),
        assistant('Hello.', 'Greet.'),
      ],
      harnessMade: [2],
    });
    const [conversation] = conversationsOfThread(thread, { episodeId: 'e', taskId: 't' }).conversations;
    const [result] = querySegments(conversation!, model, new TokenCache(model));
    if (!result?.ok) throw new Error(result?.error);
    const [trained] = result.segment.blocks.filter((block) => block.supervised);
    expect(model.decode(trained!.ids.slice(0, trained!.supervised!.from))).toBe(
      '<|im_start|>assistant\n<think>\n',
    );
    expect(model.decode(trained!.ids.slice(trained!.supervised!.from, trained!.supervised!.to))).toBe(
      'Greet.\n</think>\n\nHello.<|im_end|>',
    );
  });

  it('skips and reports a turn whose arguments are not a JSON object, where Qwen3 renders their text', async () => {
    const broken: ChatMessage[] = [
      system('You are a general-purpose subagent.'),
      user('List the files.'),
      assistant('', 'List them.', { id: 'c1', name: 'run_shell_command', arguments: '{"command": "ls' }),
      tool('c1', 'error: the arguments are not valid JSON'),
      assistant('', 'Again.', { id: 'c2', name: 'run_shell_command', arguments: '["ls"]' }),
      tool('c2', 'a.txt'),
      assistant('One file.', 'Done.'),
    ];
    const withQwen3 = await collect([episodeOf(broken)]);
    expect(withQwen3.stats.splits.train.toolCalls).toEqual({
      calls: 2,
      argumentsAsText: 2,
      turnsWithTextArguments: [
        { episode: 'e', thread: 'sub', threadSegment: 0, messageIndex: 2 },
        { episode: 'e', thread: 'sub', threadSegment: 0, messageIndex: 4 },
      ],
    });
    const qwen3Model = await qwen3();
    const runs = withQwen3.windows.flatMap((window) =>
      supervisedRuns(window, (ids) => qwen3Model.decode(ids)),
    );
    expect(runs.join('')).toContain('"arguments": {"command": "ls}');
    expect(runs.join('')).toContain('"arguments": ["ls"]}');

    const withFixture = await collect([episodeOf(broken)], { model });
    expect(withFixture.windows).toHaveLength(0);
    expect(withFixture.stats.splits.train.toolCalls?.argumentsAsText).toBe(2);
    expect(withFixture.stats.splits.train.skipped).toEqual([
      expect.objectContaining({
        reason: 'render-mismatch',
        detail: expect.stringMatching(/chat template failed/),
      }),
    ]);
  });
});
