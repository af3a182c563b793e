import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PairwiseJudgmentRecord } from '../../src/records/index.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { runMass } from '../support/cli.js';
import {
  episodeDirectory,
  episodeRecord,
  judgeUserMessage,
  removeScratchDirectories,
  rightTotalJudge,
  scratch,
  tinySumDir,
  tinySumTask,
  tinySumWorkspace,
} from './support.js';

let root: string;
let episodeDir: string;
let plainDir: string;
const servers: ScriptedServer[] = [];

beforeAll(async () => {
  root = await scratch('cli');
  const task = await tinySumTask();
  episodeDir = await episodeDirectory(path.join(root, 'episode'), episodeRecord(task), (workspace) =>
    tinySumWorkspace(workspace, {
      files: {
        'results/check.md': 'Re-ran `python3 simulate.py`: it prints 10, as results/metrics.json says.\n',
      },
    }),
  );
  plainDir = await tinySumWorkspace(path.join(root, 'plain'), { metrics: '{"total": 14}\n' });
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function server(
  answer: (userMessage: string) => string,
  strict: 'openai-compatible' | 'anthropic' = 'openai-compatible',
): Promise<ScriptedServer> {
  const started = await startScriptedServer({
    strict,
    responder: (request) => step.text(answer(judgeUserMessage(request))),
  });
  servers.push(started);
  return started;
}

/** Reasons first, then ends with the verdict for the workspace whose total is right. */
const totalJudge = (userMessage: string) =>
  `I compared both totals with data/numbers.csv.\n${rightTotalJudge(userMessage)}`;

afterAll(removeScratchDirectories);

describe('mass judge', () => {
  it('judges an episode directory against a plain workspace and prints the record as JSON', async () => {
    const judge = await server(totalJudge);
    const out = path.join(root, 'judgment.json');
    const result = await runMass(
      [
        'judge',
        '--task',
        tinySumDir,
        episodeDir,
        plainDir,
        '--model',
        'judge-model',
        '--base-url',
        judge.baseUrl,
        '--api-key-env',
        'MASS_TEST_JUDGE_KEY',
        '--seed',
        '4',
        '--out',
        out,
        '--json',
      ],
      { MASS_TEST_JUDGE_KEY: 'judge-secret' },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const judgment = PairwiseJudgmentRecord.parse(JSON.parse(result.stdout), 'stdout');
    expect(judgment).toMatchObject({
      task: 'tiny-sum',
      mode: 'random',
      seed: 4,
      model: 'judge-model',
      status: 'decided',
      winner: 'x',
      x: { label: episodeDir, bundle: { source: 'episode' } },
      y: { label: plainDir, bundle: { source: 'workspace' } },
    });
    expect(judgment.judgments).toHaveLength(1);
    expect(judgment.judgments[0]!.prompt.user).toContain('2 delegations by the orchestrator');
    expect(JSON.parse(await readFile(out, 'utf8'))).toMatchObject({
      schemaVersion: 1,
      kind: 'pairwise-judgment',
    });
    expect(judge.requests[0]!.headers.authorization).toBe('Bearer judge-secret');
    const body = judge.requests[0]!.body as Record<string, unknown>;
    expect(body).toMatchObject({
      model: 'judge-model',
      temperature: 0.6,
      top_p: 0.95,
      top_k: 20,
      max_tokens: 49_152,
    });
    expect(body.chat_template_kwargs).toEqual({ enable_thinking: true });
  }, 120_000);

  it('judges both orders and explains the result in text', async () => {
    const judge = await server(totalJudge);
    const result = await runMass([
      'judge',
      '--task',
      tinySumDir,
      plainDir,
      episodeDir,
      '--model',
      'judge-model',
      '--base-url',
      judge.baseUrl,
      '--mode',
      'both',
      '--no-thinking',
      '--max-tokens',
      '4096',
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`tiny-sum: winner ${episodeDir}`);
    expect(result.stdout).toContain(
      `judgment 1: ${plainDir} shown as A; verdict B (${episodeDir}) after 1 attempt(s)`,
    );
    expect(result.stdout).toContain(
      `judgment 2: ${episodeDir} shown as A; verdict A (${episodeDir}) after 1 attempt(s)`,
    );
    expect(result.stdout).toMatch(/bundle of .*episode: \d+ tokens; 1 of 1 deliverables pass the preflight/);
    expect(judge.requests).toHaveLength(2);
    const body = judge.requests[0]!.body as Record<string, unknown>;
    expect(body.max_tokens).toBe(4096);
    // Qwen's templates think unless told not to: leaving the switch out would not turn thinking off.
    expect(body.chat_template_kwargs).toEqual({ enable_thinking: false });
  }, 120_000);

  it('judges with an Anthropic model: max_tokens and thinking, no sampling parameters', async () => {
    const judge = await server(totalJudge, 'anthropic');
    const args = (...extra: string[]) => [
      'judge',
      '--task',
      tinySumDir,
      episodeDir,
      plainDir,
      '--provider',
      'anthropic',
      '--model',
      'claude-judge',
      '--base-url',
      judge.url,
      '--api-key-env',
      'MASS_TEST_JUDGE_KEY',
      ...extra,
    ];
    const result = await runMass(args('--max-tokens', '8192', '--thinking-budget', '2048', '--json'), {
      MASS_TEST_JUDGE_KEY: 'anthropic-secret',
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(PairwiseJudgmentRecord.parse(JSON.parse(result.stdout), 'stdout')).toMatchObject({
      status: 'decided',
      winner: 'x',
    });
    expect(judge.rejected).toHaveLength(0);
    const body = judge.requests[0]!.body as Record<string, unknown>;
    expect(body).toMatchObject({ max_tokens: 8192, thinking: { type: 'enabled', budget_tokens: 2048 } });
    for (const field of ['temperature', 'top_p', 'top_k', 'chat_template_kwargs']) {
      expect(body).not.toHaveProperty(field);
    }
    const refused = await runMass(args('--temperature', '0.6'), { MASS_TEST_JUDGE_KEY: 'k' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--temperature (Anthropic takes no sampling parameters)');
    expect(judge.requests).toHaveLength(1);
  }, 120_000);

  it('exits with the model-behaviour code when no valid verdict comes, and with a usage error for bad flags', async () => {
    const judge = await server(() => 'I cannot decide.');
    const out = path.join(root, 'failed.json');
    const failed = await runMass([
      'judge',
      '--task',
      tinySumDir,
      episodeDir,
      plainDir,
      '--model',
      'judge-model',
      '--base-url',
      judge.baseUrl,
      '--repairs',
      '1',
      '--out',
      out,
    ]);
    expect(failed.code).toBe(4);
    expect(failed.stdout).toContain(
      'tiny-sum: no verdict (no valid verdict after 2 attempts: no JSON object found in the reply)',
    );
    expect(failed.stderr).toContain('mass: the judge gave no valid verdict');
    expect(JSON.parse(await readFile(out, 'utf8'))).toMatchObject({ status: 'failed', winner: null });
    expect(judge.requests).toHaveLength(2);

    const badMode = await runMass([
      'judge',
      '--task',
      tinySumDir,
      episodeDir,
      plainDir,
      '--model',
      'm',
      '--base-url',
      judge.baseUrl,
      '--mode',
      'sometimes',
    ]);
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toContain('--mode "sometimes": use random or both');

    const missing = await runMass([
      'judge',
      '--task',
      tinySumDir,
      path.join(root, 'nowhere'),
      plainDir,
      '--model',
      'm',
      '--base-url',
      judge.baseUrl,
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('not a folder; pass an episode directory or a workspace folder');
  }, 180_000);
});
