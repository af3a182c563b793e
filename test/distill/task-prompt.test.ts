import { beforeAll, describe, expect, it } from 'vitest';

import { replaceTaskPrompt } from '../../src/distill/index.js';
import type { SftConversation } from '../../src/records/index.js';
import { TEACHER_DIRECTIVE } from '../../src/episode/prompt.js';
import type { AssistantMessage, ChatMessage } from '../../src/model/types.js';
import {
  collect,
  expectedOutput,
  fixtureEpisode,
  plainText,
  qwen3,
  readThreads,
  supervisedRuns,
  syntheticThread,
  templateInput,
  type Collected,
} from './support.js';

describe('replacing the prompt in the first user message', () => {
  const system: ChatMessage = { role: 'system', content: 'You are Qwen Code.' };
  const reminder = { type: 'text', text: '<system-reminder>\ncontext\n</system-reminder>' };

  it('replaces it inside the part that holds it, keeping the reminders and the whitespace qwen-code added', () => {
    const messages: ChatMessage[] = [
      system,
      { role: 'user', content: [reminder, { type: 'text', text: 'TASK\n\nWORKFLOW\n\n\n' }] },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'TASK\n\nWORKFLOW\n' },
    ];
    const replaced = replaceTaskPrompt(messages, 'TASK\n\nWORKFLOW\n', 'TASK\n');
    expect(replaced).toEqual({
      ok: true,
      partIndex: 1,
      messages: [
        system,
        { role: 'user', content: [reminder, { type: 'text', text: 'TASK\n\n\n' }] },
        messages[2],
        messages[3],
      ],
    });
  });

  it('finds a prompt sent without its trailing newline, in a string content', () => {
    const replaced = replaceTaskPrompt(
      [system, { role: 'user', content: 'TASK\n\nWORKFLOW' }],
      'TASK\n\nWORKFLOW\n',
      'TASK\n',
    );
    expect(replaced.ok && replaced.messages[1]).toEqual({ role: 'user', content: 'TASK' });
  });

  it('refuses when the prompt is missing or ambiguous, rather than guess', () => {
    expect(
      replaceTaskPrompt([system, { role: 'user', content: 'something else' }], 'TASK\n', 'T\n'),
    ).toMatchObject({
      ok: false,
      error: expect.stringMatching(/not found/),
    });
    expect(
      replaceTaskPrompt(
        [
          system,
          {
            role: 'user',
            content: [
              { type: 'text', text: 'TASK\n' },
              { type: 'text', text: 'TASK\n' },
            ],
          },
        ],
        'TASK\n',
        'T\n',
      ),
    ).toMatchObject({ ok: false, error: expect.stringMatching(/2 times/) });
  });
});

describe('the workflow and teacher directive in a recorded team episode', () => {
  const episode = fixtureEpisode('team-a');
  const originals = readThreads('team-a');
  let built: Collected;
  let decode: (ids: number[]) => string;

  beforeAll(async () => {
    built = await collect([episode]);
    decode = (await qwen3()).decode;
  });

  const conversationsOf = (role: string): SftConversation[] =>
    built.conversations.filter((conversation) => conversation.metadata.role === role);

  it('are replaced by the bare task in the orchestrator’s first user message', () => {
    const [orchestrator] = conversationsOf('orchestrator');
    const original = originals.find((thread) => thread.role === 'orchestrator')!.segments[0]!.messages;
    const first = orchestrator!.messages[1]!;
    expect(episode.prompt).toContain('## Team workflow');
    expect(first.content).toContain(episode.bareTask.trimEnd());
    expect(first.content).not.toContain('## Team workflow');
    expect(first.content).not.toContain(TEACHER_DIRECTIVE);
    expect(first.content).toBe(plainText(original[1]!.content).replace(episode.prompt, episode.bareTask));
  });

  it('leave every other message, and every subagent’s conversation, exactly as recorded', () => {
    const [orchestrator] = conversationsOf('orchestrator');
    const original = originals.find((thread) => thread.role === 'orchestrator')!.segments[0]!.messages;
    const expected = templateInput(original);
    expect(orchestrator!.messages.filter((_, index) => index !== 1)).toEqual(
      expected.filter((_, index) => index !== 1),
    );
    const subagents = conversationsOf('subagent');
    expect(subagents).toHaveLength(2);
    for (const subagent of subagents) {
      const thread = originals.find((candidate) => candidate.threadId === subagent.metadata.thread)!;
      const recorded = templateInput(thread.segments[0]!.messages).slice(0, subagent.messages.length);
      expect(subagent.messages).toEqual(recorded);
    }
    expect(subagents.map((subagent) => subagent.messages[1]!.content).join('\n')).toMatch(
      /COMPUTE: you are the computer/,
    );
  });

  it('appear in no window, while the bare task is in the orchestrator’s', () => {
    const orchestratorWindows = built.windows.filter((window) => window.role === 'orchestrator');
    expect(orchestratorWindows.length).toBeGreaterThan(0);
    for (const window of built.windows) {
      const text = decode(window.input_ids);
      expect(text).not.toContain('## Team workflow');
      expect(text).not.toContain('## How to run this team');
      if (window.role === 'orchestrator') expect(text).toContain(episode.bareTask.trimEnd());
    }
  });

  it('leave the thread out, reported, when the prompt cannot be found', async () => {
    const { windows, conversations, stats } = await collect([
      { ...episode, prompt: `${episode.prompt}(edited)\n` },
    ]);
    expect(windows.some((window) => window.role === 'orchestrator')).toBe(false);
    expect(conversations.some((conversation) => conversation.metadata.role === 'orchestrator')).toBe(false);
    expect(windows.some((window) => window.role === 'subagent')).toBe(true);
    expect(stats.splits.train.skipped).toEqual([
      expect.objectContaining({ role: 'orchestrator', reason: 'prompt-not-found' }),
    ]);
  });
});

describe('responses cut by the length limit', () => {
  let built: Collected;
  let decode: (ids: number[]) => string;

  beforeAll(async () => {
    built = await collect([fixtureEpisode('team-a')]);
    decode = (await qwen3()).decode;
  });

  it('are dropped: the checker’s truncated final reply is in no window and no conversation', () => {
    const truncatedReasoning = 'I will explain at length';
    expect(JSON.stringify(readThreads('team-a'))).toContain(truncatedReasoning);
    expect(built.stats.splits.train.truncatedResponses).toBe(1);
    for (const window of built.windows) expect(decode(window.input_ids)).not.toContain(truncatedReasoning);
    expect(JSON.stringify(built.conversations)).not.toContain(truncatedReasoning);
    const checker = built.conversations.find((conversation) =>
      conversation.messages[1]!.content.includes('CHECK:'),
    )!;
    expect(checker.messages.at(-1)!.role).toBe('tool');
    expect(checker.metadata.targets).toEqual([2]);
  });

  it('train nothing of the orchestrator’s that is not its own complete output', () => {
    const runs = built.windows
      .filter((window) => window.role === 'orchestrator')
      .flatMap((window) => supervisedRuns(window, decode));
    const recorded = readThreads('team-a').find((thread) => thread.role === 'orchestrator')!.segments[0]!
      .messages;
    expect(runs).toEqual(
      [2, 4, 6].map((index) =>
        expectedOutput(recorded[index] as AssistantMessage, index === recorded.length - 1),
      ),
    );
    expect(runs.join('')).not.toContain('approved: true, because');
  });

  it('stay as context, untrained, when the conversation went on after them', async () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are a general-purpose subagent.' },
      { role: 'user', content: 'Write the report.' },
      { role: 'assistant', content: 'The report begins', reasoning_content: 'Long report' },
      { role: 'user', content: 'You were cut off; write it shorter.' },
      { role: 'assistant', content: 'Short report.', reasoning_content: 'Be brief.' },
    ];
    const thread = syntheticThread({ role: 'subagent', messages, truncated: [2] });
    const { windows, conversations, stats } = await collect([
      {
        episodeId: 'e',
        taskId: 't',
        split: 'train',
        team: false,
        prompt: '',
        bareTask: '',
        threads: [thread],
      },
    ]);
    expect(stats.splits.train.truncatedResponses).toBe(1);
    expect(conversations.map((conversation) => conversation.metadata.targets)).toEqual([[4]]);
    expect(windows).toHaveLength(1);
    expect(decode(windows[0]!.input_ids)).toContain('The report begins');
    expect(supervisedRuns(windows[0]!, decode)).toEqual([
      '<think>\nBe brief.\n</think>\n\nShort report.<|im_end|>',
    ]);
  });
});
