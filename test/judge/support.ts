import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { EpisodeRecord } from '../../src/records/episode-record.js';
import { buildThreads } from '../../src/records/threads.js';
import { buildWorkspaceBundle, type BundleBudget, type WorkspaceBundle } from '../../src/judge/index.js';
import { loadTokenCounter, type TokenCounter } from '../../src/model/token-counter.js';
import { loadTask, materializeWorkspace, runPython, type LoadedTask } from '../../src/tasks/index.js';
import type { ScriptedRequest } from '../../src/testing/scripted-server.js';
import { readProxyLog } from '../support/fixtures.js';

export const tinySumDir = fileURLToPath(new URL('../fixtures/tasks/tiny-sum', import.meta.url));
/** The sum of tiny-sum's `data/numbers.csv` (1 + 2 + 3 + 4), what `python3 simulate.py` prints. */
export const TINY_SUM_TOTAL = 10;
const judgeFixturesDir = fileURLToPath(new URL('../fixtures/judge', import.meta.url));
const proxyLogFixture = fileURLToPath(
  new URL('../fixtures/qwen-code-0.24.4/requests.jsonl', import.meta.url),
);

/**
 * A team's finished work on a research-12 task, as a judge would see it: the task's workspace for the seed, then the
 * team's entry point from `test/fixtures/judge/<task>/` run in it. Written as a team writes it, it says nothing about
 * how good it is meant to be (unlike the task suite's reference solutions, whose switch names the trap).
 */
export async function solvedWorkspace(task: LoadedTask, workspaceDir: string, seed: number): Promise<string> {
  await materializeWorkspace(task, { seed, workspaceDir });
  const solution = path.join(judgeFixturesDir, task.manifest.id);
  await cp(solution, workspaceDir, { recursive: true });
  const run = await runPython(['run.py'], { cwd: workspaceDir, timeoutMs: 120_000 });
  if (run.exitCode !== 0)
    throw new Error(`run.py of ${solution} failed (${run.exitCode}):\n${run.stderr.slice(-3000)}`);
  return workspaceDir;
}

export function tinySumTask(): Promise<LoadedTask> {
  return loadTask(tinySumDir);
}

export function tokenCounter(): Promise<TokenCounter> {
  return loadTokenCounter();
}

const scratchDirectories: string[] = [];

/** A fresh folder under the system's temporary directory, removed by `removeScratchDirectories`. */
export async function scratch(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), `mass-judge-${prefix}-`));
  scratchDirectories.push(dir);
  return dir;
}

export async function removeScratchDirectories(): Promise<void> {
  await Promise.all(scratchDirectories.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}

/**
 * A tiny-sum workspace as a team might leave it: the inputs, a metrics file (by default the right sum of
 * `data/numbers.csv`, 10), and whatever `files` adds.
 */
export async function tinySumWorkspace(
  dir: string,
  options: { metrics?: string | null; files?: Record<string, string | Buffer> } = {},
): Promise<string> {
  await mkdir(path.join(dir, 'data'), { recursive: true });
  await cp(path.join(tinySumDir, 'inputs/numbers.csv'), path.join(dir, 'data/numbers.csv'));
  await cp(path.join(tinySumDir, 'inputs/simulate.py'), path.join(dir, 'simulate.py'));
  const metrics = options.metrics === undefined ? `{"total": ${TINY_SUM_TOTAL}}\n` : options.metrics;
  if (metrics !== null) await writeText(dir, 'results/metrics.json', metrics);
  for (const [file, content] of Object.entries(options.files ?? {})) await writeText(dir, file, content);
  return dir;
}

export async function writeText(dir: string, file: string, content: string | Buffer): Promise<void> {
  await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
  await writeFile(path.join(dir, file), content);
}

/**
 * Two bundles of the tiny-sum task in a fresh scratch folder: `right` reports the right total (10), `wrong` reports 14.
 * The judge's tests and the evaluation's judgment tests compare them.
 */
export async function rightAndWrongBundles(
  task: LoadedTask,
  prefix: string,
): Promise<{ right: WorkspaceBundle; wrong: WorkspaceBundle }> {
  const root = await scratch(prefix);
  const right = await bundleOf(task, await tinySumWorkspace(path.join(root, 'right')));
  const wrong = await bundleOf(
    task,
    await tinySumWorkspace(path.join(root, 'wrong'), { metrics: '{"total": 14}\n' }),
  );
  return { right, wrong };
}

export async function bundleOf(
  task: LoadedTask,
  location: string,
  budget?: Partial<BundleBudget>,
): Promise<WorkspaceBundle> {
  return buildWorkspaceBundle({ task, location, tokenCounter: await tokenCounter(), budget });
}

type EpisodeFields = Partial<EpisodeRecord>;

/** A valid episode record for `task`, changed by `fields`. */
export function episodeRecord(task: LoadedTask, fields: EpisodeFields = {}): EpisodeRecord {
  return {
    episodeId: 'episode-under-test',
    task: { id: task.manifest.id, dir: task.dir },
    workflowHash: 'feedfacefeedface',
    teacher: false,
    seed: 7,
    dataSeed: 7,
    model: 'scripted-model',
    baseUrl: 'http://127.0.0.1:1/v1',
    status: 'success',
    failure: null,
    timings: {
      startedAt: '2026-01-01T00:00:00.000Z',
      endedAt: '2026-01-01T00:12:03.000Z',
      durationMs: 723_000,
      harnessMs: 720_000,
    },
    usage: {
      total: { promptTokens: 90_000, completionTokens: 12_345, reasoningTokens: 6_000 },
      perThread: [
        {
          threadId: 't1',
          role: 'orchestrator',
          calls: 3,
          promptTokens: 1,
          completionTokens: 1,
          reasoningTokens: 0,
        },
        {
          threadId: 't2',
          role: 'subagent',
          calls: 3,
          promptTokens: 1,
          completionTokens: 1,
          reasoningTokens: 0,
        },
      ],
    },
    modelCalls: 9,
    failedModelCalls: 0,
    delegations: 2,
    integrity: { assets: [], tampered: false, tamperedPaths: [] },
    sandbox: {
      enabled: true,
      exitCode: 0,
      signal: null,
      limitExceeded: null,
      cpuSeconds: 3,
      peakMemoryBytes: 1_000_000,
    },
    harness: { name: 'qwen-code', version: '0.24.4' },
    ...fields,
  };
}

/**
 * An episode directory around a workspace: `episode.json` and `threads.jsonl` built from the recorded qwen-code
 * fixture (an orchestrator delegating to two subagents).
 */
export async function episodeDirectory(
  episodeDir: string,
  record: EpisodeRecord | undefined,
  fillWorkspace: (workspaceDir: string) => Promise<unknown>,
): Promise<string> {
  const workspaceDir = path.join(episodeDir, 'workspace');
  await mkdir(workspaceDir, { recursive: true });
  await fillWorkspace(workspaceDir);
  const threads = buildThreads(readProxyLog(proxyLogFixture));
  await writeFile(
    path.join(episodeDir, 'threads.jsonl'),
    threads.map((thread) => `${JSON.stringify(thread)}\n`).join(''),
  );
  if (record) await EpisodeRecord.write(path.join(episodeDir, 'episode.json'), record);
  return episodeDir;
}

/** The user message of a judge request as the scripted server received it. */
export function judgeUserMessage(request: ScriptedRequest): string {
  const body = request.body as {
    messages: Array<{ role: string; content: string | Array<{ type: string; text?: string }> }>;
  };
  const content = body.messages.find((message) => message.role === 'user')!.content;
  // Anthropic's turns carry text blocks.
  return typeof content === 'string' ? content : content.map((block) => block.text ?? '').join('');
}

/** The text of the workspace shown under `label` in a judge prompt. */
export function shownWorkspace(userMessage: string, label: 'A' | 'B'): string {
  const start = userMessage.indexOf(`<workspace name="${label}">`);
  const end = userMessage.indexOf('</workspace>', start);
  return userMessage.slice(start, end);
}

/**
 * A scripted judge that decides on the evidence, as a real one would: the workspace whose `results/metrics.json`
 * holds the right total wins.
 */
export function rightTotalJudge(userMessage: string): string {
  const right = `{"total": ${TINY_SUM_TOTAL}}`;
  const winner = shownWorkspace(userMessage, 'A').includes(right) ? 'A' : 'B';
  return verdictJson(
    winner,
    `Workspace ${winner}'s results/metrics.json holds ${TINY_SUM_TOTAL}, the sum that simulate.py prints for data/numbers.csv; the other total is wrong.`,
  );
}

export const verdictJson = (winner: 'A' | 'B' | 'tie', rationale = 'Decided on the evidence.') =>
  JSON.stringify({ winner, rationale });
