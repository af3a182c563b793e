import { beforeAll, describe, expect, it } from 'vitest';

import {
  conversationsOfThread,
  planWindows,
  querySegments,
  TokenCache,
  windowTokens,
  type ChatTemplateModel,
  type QuerySegment,
  type WindowLimits,
} from '../../src/distill/index.js';
import type { Thread } from '../../src/records/threads.js';
import type { ChatMessage } from '../../src/model/types.js';
import { seededRandom, type Random } from '../../src/ranking/seeded-random.js';
import { qwen35Style } from './qwen35-style.js';
import { assistant, collect, qwen3, syntheticThread, system, tool, user } from './support.js';

const WORDS =
  'alpha beta gamma delta sum column 10 results/metrics.json python3 check ok total = ; ( ) {'.split(' ');

function words(random: Random, count: number): string {
  return Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
}

/** A subagent conversation with several queries, turns and tool results of very different lengths. */
function randomThread(seed: number): Thread {
  const random = seededRandom(seed);
  const messages: ChatMessage[] = [system(`You are a general-purpose subagent. ${words(random, 40)}`)];
  const queries = 1 + Math.floor(random() * 3);
  for (let query = 0; query < queries; query++) {
    messages.push(user(`Query ${query}: ${words(random, 5 + Math.floor(random() * 60))}`));
    const turns = 1 + Math.floor(random() * 8);
    for (let turn = 0; turn < turns; turn++) {
      const size = random() < 0.1 ? 400 : 5 + Math.floor(random() * 80);
      const reasoning = random() < 0.8 ? words(random, 5 + Math.floor(random() * 40)) : undefined;
      if (turn < turns - 1) {
        const id = `c${query}-${turn}`;
        messages.push(
          assistant(words(random, Math.floor(random() * 20)), reasoning, {
            id,
            name: 'run_shell_command',
            arguments: JSON.stringify({ command: words(random, size) }),
          }),
        );
        messages.push(tool(id, words(random, random() < 0.15 ? 600 : Math.floor(random() * 150))));
      } else {
        messages.push(assistant(words(random, size), reasoning));
      }
    }
  }
  return syntheticThread({ role: 'subagent', messages, id: `thread-${seed}` });
}

const limitCases: WindowLimits[] = [
  { windowTokens: 400, maxContextTokens: 0, maxHeaderFraction: 0.9 },
  { windowTokens: 600, maxContextTokens: 64, maxHeaderFraction: 0.9 },
  { windowTokens: 900, maxContextTokens: 200, maxHeaderFraction: 0.5 },
  { windowTokens: 2_000, maxContextTokens: 300, maxHeaderFraction: 0.9 },
  { windowTokens: 49_152, maxContextTokens: 8_192, maxHeaderFraction: 0.9 },
];

const templates: Array<[string, () => Promise<ChatTemplateModel>]> = [
  ['Qwen3', qwen3],
  ['the Qwen3.5-style fixture', qwen35Style],
];

describe.each(templates)('windows with %s', (_name, load) => {
  let model: ChatTemplateModel;
  const segments: QuerySegment[] = [];

  beforeAll(async () => {
    model = await load();
    for (let seed = 1; seed <= 12; seed++) {
      const [conversation] = conversationsOfThread(randomThread(seed), {
        episodeId: 'e',
        taskId: 't',
      }).conversations;
      for (const result of querySegments(conversation!, model, new TokenCache(model))) {
        if (!result.ok) throw new Error(result.error);
        segments.push(result.segment);
      }
    }
  });

  it.each(limitCases)('respect every limit: %o', (limits) => {
    let windows = 0;
    let multiWindowSegments = 0;
    for (const segment of segments) {
      const plan = planWindows(segment, limits);
      const headerTokens = segment.header.reduce((sum, block) => sum + block.ids.length, 0);
      if (!plan.ok) {
        expect(headerTokens).toBeGreaterThan(limits.maxHeaderFraction * limits.windowTokens);
        continue;
      }
      if (plan.windows.length > 1) multiWindowSegments++;
      const lengths = segment.blocks.map((block) => block.ids.length);
      const covered: number[] = [];
      let previousEnd = 0;
      for (const layout of plan.windows) {
        windows++;
        const { inputIds, labels } = windowTokens(segment, layout);
        expect(inputIds).toHaveLength(layout.tokens.total);
        expect(labels).toHaveLength(layout.tokens.total);
        expect(layout.tokens.total).toBeLessThanOrEqual(limits.windowTokens);
        expect(layout.tokens.header).toBe(headerTokens);
        expect(layout.tokens.header).toBeLessThanOrEqual(limits.maxHeaderFraction * limits.windowTokens);
        expect(layout.tokens.context).toBeLessThanOrEqual(limits.maxContextTokens);
        expect(layout.tokens.total).toBe(layout.tokens.header + layout.tokens.context + layout.tokens.body);
        expect(labels.filter((label) => label !== -100)).toHaveLength(layout.supervisedTokens);

        // Context: whole turns before the body, the newest ones contiguous, the query possibly ahead of them.
        const { from, to } = layout.body;
        const endsAtBody = (run: number[]) =>
          run.every((index, position) => index === from - run.length + position);
        const run =
          !endsAtBody(layout.context) && segment.blocks[layout.context[0]!]?.isQuery
            ? layout.context.slice(1)
            : layout.context;
        expect(endsAtBody(run)).toBe(true);
        expect(layout.context.every((index) => index < from)).toBe(true);
        // The body starts and ends with a trained turn, from the first one after the previous window.
        expect(segment.blocks[from]!.supervised).not.toBeNull();
        expect(segment.blocks[to - 1]!.supervised).not.toBeNull();
        const skippedBetween = range(previousEnd, from).filter((index) => segment.blocks[index]!.supervised);
        expect(skippedBetween.every((index) => lengths[index]! + headerTokens > limits.windowTokens)).toBe(
          true,
        );
        // Whole turns up to the last trained one that fits: the next trained turn would not.
        const next = range(to, lengths.length).find((index) => segment.blocks[index]!.supervised);
        if (next !== undefined) {
          const withNext = sum(lengths.slice(from, next + 1));
          expect(layout.tokens.header + layout.tokens.context + withNext).toBeGreaterThan(
            limits.windowTokens,
          );
        }
        covered.push(...layout.targets);
        previousEnd = to;
      }
      const skipped = plan.skippedTurns.map((turn) => turn.messageIndex);
      expect([...covered, ...skipped].sort((a, b) => a - b)).toEqual(segment.targets);
    }
    expect(windows).toBeGreaterThan(0);
    if (limits.windowTokens <= 2_000) expect(multiWindowSegments).toBeGreaterThan(0);
  });

  it('puts a later query’s user message in the context of its windows when it fits', () => {
    const limits = { windowTokens: 2_000, maxContextTokens: 300, maxHeaderFraction: 0.9 };
    let checked = 0;
    for (const segment of segments.filter((candidate) => candidate.index > 0)) {
      const query = segment.blocks.findIndex((block) => block.isQuery);
      expect(query).toBeGreaterThanOrEqual(0);
      const plan = planWindows(segment, limits);
      if (!plan.ok) continue;
      for (const layout of plan.windows) {
        const room =
          limits.windowTokens - layout.tokens.header - segment.blocks[layout.body.from]!.ids.length;
        const queryTokens = segment.blocks[query]!.ids.length;
        if (query < layout.body.from && queryTokens <= Math.min(limits.maxContextTokens, room)) {
          expect(layout.context).toContain(query);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('are counted exactly in the statistics, and report what they leave out', async () => {
    const threads = Array.from({ length: 6 }, (_, index) => randomThread(100 + index));
    const { windows, stats } = await collect(
      [{ episodeId: 'e', taskId: 't', split: 'train', team: false, prompt: '', bareTask: '', threads }],
      { model, limits: { windowTokens: 700, maxContextTokens: 100 } },
    );
    const train = stats.splits.train;
    expect(train.total.windows).toBe(windows.length);
    expect(train.total.supervisedTokens).toBe(sum(windows.map((window) => window.supervisedTokens)));
    expect(train.total.supervisedTokens).toBe(
      sum(windows.map((window) => window.labels.filter((label) => label !== -100).length)),
    );
    expect(train.total.tokens).toBe(sum(windows.map((window) => window.input_ids.length)));
    expect(train.perTask.t!.perRole.subagent).toEqual(train.total);
    const tooLong = train.skipped.filter((item) => item.reason === 'turn-too-long');
    expect(tooLong.length).toBeGreaterThan(0);
    expect(tooLong.every((item) => item.supervisedTokens! > 0 && item.messageIndex !== undefined)).toBe(true);
  });
});

function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from) }, (_, index) => from + index);
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
