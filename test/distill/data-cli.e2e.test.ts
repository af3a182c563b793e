import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { readWindowSummaries, sampleWindows } from '../../src/distill/index.js';
import { TrainingDataStats } from '../../src/records/index.js';
import { SftConversation, TrainingWindow, WindowSummary } from '../../src/records/index.js';
import { runMass, type CliResult } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { qwen35StyleDirectory } from './qwen35-style.js';
import { fixtures, tasksDirectory } from './support.js';

function lines<T>(file: string, parse: (value: unknown) => T): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => parse(JSON.parse(line)));
}

describe('mass data build and mass data sample', () => {
  const directory = temporaryDirectory('mass-data-cli-');
  const teamOut = join(directory.path, 'team');
  const singleOut = join(directory.path, 'single');
  let team: CliResult;
  let single: CliResult;
  let refused: CliResult;
  // The team episode as if a Qwen3.6 had played it: Qwen3's files (the default) are refused, its own directory used.
  const qwen36Episode = join(directory.path, 'qwen3.6-episode');
  const qwen36Out = join(directory.path, 'qwen3.6');
  let wrongTokenizer: CliResult;
  let ownTokenizer: CliResult;

  beforeAll(async () => {
    cpSync(join(fixtures, 'team-a'), qwen36Episode, { recursive: true });
    const record = JSON.parse(readFileSync(join(qwen36Episode, 'episode.json'), 'utf8')) as { model: string };
    record.model = 'Qwen/Qwen3.6-27B';
    writeFileSync(join(qwen36Episode, 'episode.json'), JSON.stringify(record));
    const qwen36Build = (out: string, ...options: string[]) =>
      runMass([
        'data',
        'build',
        '--episodes',
        qwen36Episode,
        '--task-dir',
        tasksDirectory,
        '--out',
        out,
        '--json',
        ...options,
      ]);
    [team, single, refused, wrongTokenizer, ownTokenizer] = await Promise.all([
      runMass([
        'data',
        'build',
        '--episodes',
        join(fixtures, 'team-a'),
        '--validation',
        join(fixtures, 'single'),
        '--task-dir',
        tasksDirectory,
        '--out',
        teamOut,
        '--window',
        '20000',
        '--max-context',
        '1024',
        '--json',
      ]),
      runMass([
        'data',
        'build',
        '--episodes',
        join(fixtures, 'single'),
        '--single-agent',
        '--task-dir',
        tasksDirectory,
        '--out',
        singleOut,
      ]),
      runMass([
        'data',
        'build',
        '--episodes',
        join(fixtures, 'team-a'),
        '--single-agent',
        '--task-dir',
        tasksDirectory,
        '--out',
        join(directory.path, 'refused'),
      ]),
      qwen36Build(join(directory.path, 'qwen3.6-refused')),
      qwen36Build(qwen36Out, '--model-dir', qwen35StyleDirectory()),
    ]);
  }, 90_000);

  afterAll(() => directory.remove());

  it('writes windows, their index, TRL conversations and exact statistics for both splits', () => {
    expect(team.stderr).not.toMatch(/Error/);
    expect(team.code).toBe(0);
    const printed = TrainingDataStats.parse(JSON.parse(team.stdout), 'stdout');
    const stats = TrainingDataStats.parse(
      JSON.parse(readFileSync(join(teamOut, 'stats.json'), 'utf8')),
      'stats.json',
    );
    expect(printed).toEqual(stats);
    expect(stats.limits).toEqual({ windowTokens: 20_000, maxContextTokens: 1_024, maxHeaderFraction: 0.9 });
    const expected = {
      train: { roles: ['orchestrator', 'subagent', 'subagent'], truncated: 1 },
      validation: { roles: ['orchestrator'], truncated: 0 },
    };
    for (const split of ['train', 'validation'] as const) {
      const windows = lines(join(teamOut, `${split}.windows.jsonl`), (value) => TrainingWindow.parse(value));
      const index = lines(join(teamOut, `${split}.index.jsonl`), (value) => WindowSummary.parse(value));
      const conversations = lines(join(teamOut, `${split}.conversations.jsonl`), (value) =>
        SftConversation.parse(value),
      );
      const counts = stats.splits[split];
      expect(counts.episodes).toBe(1);
      expect(windows.map((window) => window.role).sort()).toEqual(expected[split].roles);
      expect(counts.total.windows).toBe(windows.length);
      expect(counts.total.supervisedTokens).toBe(
        windows.reduce((sum, window) => sum + window.supervisedTokens, 0),
      );
      expect(counts.total.tokens).toBe(windows.reduce((sum, window) => sum + window.input_ids.length, 0));
      expect(counts.perTask['tiny-sum']!.perRole.orchestrator.windows).toBe(1);
      expect(counts.truncatedResponses).toBe(expected[split].truncated);
      for (const window of windows) {
        expect(window.split).toBe(split);
        expect(window.labels).toHaveLength(window.input_ids.length);
        expect(window.input_ids.length).toBeLessThanOrEqual(20_000);
        expect(window.tokens.context).toBeLessThanOrEqual(1_024);
      }
      expect(index).toEqual(windows.map(({ input_ids: _ids, labels: _labels, ...summary }) => summary));
      expect(conversations).toHaveLength(expected[split].roles.length);
      expect(conversations.every((conversation) => conversation.tools.length > 0)).toBe(true);
    }
  });

  it('plans the sampler from the index: exact expected and realised processed tokens', async () => {
    const plan = join(directory.path, 'plan.jsonl');
    const result = await runMass([
      'data',
      'sample',
      '--data',
      teamOut,
      '--steps',
      '5',
      '--batch-size',
      '2',
      '--seed',
      '4',
      '--plan',
      plan,
      '--json',
    ]);
    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as Record<string, number>;
    const expected = sampleWindows(await readWindowSummaries(teamOut, 'train'), {
      steps: 5,
      batchSize: 2,
      seed: 4,
    });
    expect(summary).toMatchObject({
      windows: 3,
      steps: 5,
      batchSize: 2,
      storedSupervisedTokens: expected.storedSupervisedTokens,
      expectedProcessedSupervisedTokens: expected.expectedProcessedSupervisedTokens,
      processedSupervisedTokens: expected.processedSupervisedTokens,
    });
    const steps = readFileSync(plan, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { windows: string[] });
    expect(steps).toHaveLength(5);
    expect(steps.every((step) => step.windows.length === 2)).toBe(true);
  }, 30_000);

  it('builds single-agent baseline data from a bare episode: its orchestrator thread, nothing stripped', () => {
    expect(single.code).toBe(0);
    expect(single.stdout).toMatch(/single-agent/);
    const windows = lines(join(singleOut, 'train.windows.jsonl'), (value) => TrainingWindow.parse(value));
    expect(windows.map((window) => window.role)).toEqual(['orchestrator']);
    const [conversation] = lines(join(singleOut, 'train.conversations.jsonl'), (value) =>
      SftConversation.parse(value),
    );
    const prompt = readFileSync(join(fixtures, 'single', 'prompt.md'), 'utf8');
    expect(conversation!.messages[1]!.content).toContain(prompt);
  });

  it('refuses a tokenizer of another family than the served model’s, naming both, and uses the model’s own', () => {
    expect(wrongTokenizer.code).toBe(2);
    expect(wrongTokenizer.stderr).toMatch(
      /tokenizer, Qwen3's tokenizer \(the default, .*\) \(family qwen3\), is not that of the served model "Qwen\/Qwen3.6-27B" \(family qwen3.5\).*--model-dir.*--allow-tokenizer-mismatch/s,
    );
    expect(ownTokenizer.stderr).not.toMatch(/Error/);
    expect(ownTokenizer.code).toBe(0);
    const stats = TrainingDataStats.parse(JSON.parse(ownTokenizer.stdout), 'stdout');
    expect(stats.model).toBe(qwen35StyleDirectory());
    expect(stats.tokenizer).toMatchObject({
      family: 'qwen3.5',
      served: [{ model: 'Qwen/Qwen3.6-27B', family: 'qwen3.5' }],
      verdict: 'same-family',
    });
    // Every tool-calling turn rendered with the template that needs its arguments as a mapping.
    expect(stats.splits.train.skipped).toEqual([]);
    expect(stats.splits.train.toolCalls).toMatchObject({ argumentsAsText: 0 });
    expect(stats.splits.train.toolCalls!.calls).toBeGreaterThan(3);
    expect(stats.splits.train.total.windows).toBe(3);
  });

  it('refuses team episodes for single-agent data, saying why', () => {
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/ran with a team workflow or the teacher directive/);
  });
});
