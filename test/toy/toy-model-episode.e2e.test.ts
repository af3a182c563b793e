import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { conversationsOfThread, type TrainingConversation } from '../../src/distill/training-conversation.js';
import { runEpisode, type EpisodeResult } from '../../src/episode/run-episode.js';
import { Thread } from '../../src/records/threads.js';
import { gradeWorkspace, type Grade } from '../../src/tasks/grade.js';
import { loadTask, type LoadedTask } from '../../src/tasks/load-task.js';
import { renderTaskPrompt } from '../../src/tasks/render-prompt.js';
import type { ReplyServer } from '../../src/toy/reply-server.js';
import { BASE_TOY_WEIGHTS, startToyModel, TOY_OUTPUT_MARKER, trainToyWeights } from '../../src/toy/index.js';
import { temporaryDirectory } from '../support/fixtures.js';

const suiteDir = fileURLToPath(new URL('../../suites/demo', import.meta.url));
const TASKS = [
  { id: 'demo-potency', seed: 11 },
  { id: 'demo-volatility', seed: 12 },
];

interface Run {
  task: LoadedTask;
  seed: number;
  outDir: string;
  result: EpisodeResult;
  threads: Thread[];
  grade: Grade;
  seconds: number;
}

function readThreads(outDir: string): Thread[] {
  return readFileSync(join(outDir, 'threads.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => Thread.parse(JSON.parse(line)));
}

function toolCalls(thread: Thread) {
  return thread.segments
    .flatMap((segment) => segment.messages)
    .flatMap((message) => (message.role === 'assistant' ? (message.tool_calls ?? []) : []));
}

describe('the toy model as an agent team: real qwen-code, sandboxed, on each demo task with its initial workflow', () => {
  const directory = temporaryDirectory('mass-toy-episode-');
  let server: ReplyServer;
  const runs: Run[] = [];

  beforeAll(async () => {
    // A diligent generation: always delegates, runs every check, writes complete reports, never slips.
    const weights = {
      ...BASE_TOY_WEIGHTS,
      delegateWithWorkflow: 1,
      runChecks: 1,
      completeReport: 1,
      careful: 1,
    };
    server = await startToyModel({ weights, modelName: 'mass-toy' });
    const root = realpathSync(directory.path);
    await Promise.all(
      TASKS.map(async ({ id, seed }) => {
        const task = await loadTask(join(suiteDir, id));
        const outDir = join(root, id);
        const started = Date.now();
        const result = await runEpisode({
          taskDir: task.dir,
          workflow: task.manifest.workflow,
          teacher: true,
          model: 'mass-toy',
          baseUrl: server.baseUrl,
          seed,
          outDir,
          timeoutSeconds: 150,
        });
        const seconds = (Date.now() - started) / 1000;
        const grade = await gradeWorkspace(task, { workspaceDir: join(outDir, 'workspace'), seed });
        runs.push({ task, seed, outDir, result, threads: readThreads(outDir), grade, seconds });
      }),
    );
    runs.sort((x, y) => x.task.manifest.id.localeCompare(y.task.manifest.id));
  }, 240_000);

  afterAll(async () => {
    await server?.close();
    directory.remove();
  });

  it('succeeds on both tasks, delegating to both subagents in hop order', () => {
    expect(runs.map((run) => run.task.manifest.id)).toEqual(['demo-potency', 'demo-volatility']);
    for (const run of runs) {
      expect(run.result.record.status, run.task.manifest.id).toBe('success');
      expect(run.result.record.failure).toBeNull();
      expect(run.result.record.delegations).toBe(2);
      expect(run.threads.map((thread) => thread.role)).toEqual(['orchestrator', 'subagent', 'subagent']);
      const delegations = toolCalls(run.threads[0]!).map((call) => JSON.parse(call.function.arguments));
      expect(delegations.map((call) => call.description.split(':')[0])).toEqual(['analyst', 'reporter']);
      for (const call of delegations) {
        expect(call).toMatchObject({ subagent_type: 'general-purpose', run_in_background: false });
        expect(call.prompt).toContain('Files you write:');
      }
      for (const subagent of run.threads.slice(1)) {
        expect(toolCalls(subagent).map((call) => call.function.name)).toEqual([
          'write_file',
          'run_shell_command',
        ]);
      }
    }
    console.log(
      `toy team episodes: ${runs.map((run) => `${run.task.manifest.id} ${run.seconds.toFixed(1)} s, ${run.result.record.modelCalls} calls`).join('; ')}`,
    );
  });

  it('leaves every deliverable, and the withheld grader accepts the workspace', () => {
    for (const run of runs) {
      const workspace = join(run.outDir, 'workspace');
      for (const deliverable of run.task.manifest.deliverables) {
        expect(existsSync(join(workspace, deliverable.path)), deliverable.path).toBe(true);
      }
      expect(run.grade.parts.find((part) => part.name === 'deliverables')?.score).toBe(1);
      expect(run.grade.score, JSON.stringify(run.grade.parts)).toBeGreaterThanOrEqual(90);
      const checks = JSON.parse(readFileSync(join(workspace, 'checks', 'analyst.json'), 'utf8'));
      expect(checks.checks).toEqual({ values_finite: true });
    }
  });

  it('marks what it wrote as toy output: the report, each subagent report, the final answer', () => {
    for (const run of runs) {
      expect(readFileSync(join(run.outDir, 'workspace', 'report.md'), 'utf8')).toContain(TOY_OUTPUT_MARKER);
      const orchestrator = run.threads[0]!.segments.at(-1)!.messages;
      const toolResults = orchestrator.filter((message) => message.role === 'tool');
      expect(toolResults).toHaveLength(2);
      for (const result of toolResults) expect(JSON.stringify(result.content)).toContain('Report from');
      const final = orchestrator.at(-1)!;
      expect(final.role).toBe('assistant');
      expect(String(final.content)).toContain(TOY_OUTPUT_MARKER);
      expect(String(final.content)).toMatch(/1\. analyst .*\n2\. reporter/);
    }
  });

  it('trains on these trajectories: the weights move towards the behaviours they show, deterministically', () => {
    const conversations: TrainingConversation[] = runs.flatMap((run) => {
      const prompt = readFileSync(join(run.outDir, 'prompt.md'), 'utf8');
      const bareTask = renderTaskPrompt(run.task);
      return run.threads
        .filter((thread) => thread.role !== 'auxiliary')
        .flatMap(
          (thread) =>
            conversationsOfThread(thread, {
              episodeId: run.task.manifest.id,
              taskId: run.task.manifest.id,
              ...(thread.role === 'orchestrator' ? { taskPrompt: { prompt, bareTask } } : {}),
            }).conversations,
        );
    });
    const orchestrators = conversations.filter((conversation) => conversation.role === 'orchestrator');
    expect(orchestrators).toHaveLength(2);
    // The workflow is stripped: the toy learns to delegate from the bare task.
    for (const conversation of orchestrators)
      expect(JSON.stringify(conversation.messages)).not.toContain('Team workflow');

    const trained = trainToyWeights(BASE_TOY_WEIGHTS, conversations);
    expect(trained.generation).toBe(1);
    expect(trained.delegateBare).toBeCloseTo(0.05 + 0.5 * (1 - 0.05), 6);
    expect(trained.delegateWithWorkflow).toBeCloseTo(0.85 + 0.5 * (1 - 0.85), 6);
    expect(trained.runChecks).toBeCloseTo(0.5 + 0.5 * (1 - 0.5), 6);
    expect(trained.completeReport).toBeCloseTo(0.6 + 0.5 * (1 - 0.6), 6);
    expect(trained.careful).toBeCloseTo(0.7 + 0.5 * (1 - 0.7), 6);
    expect(trainToyWeights(BASE_TOY_WEIGHTS, conversations)).toEqual(trained);
  });
});
