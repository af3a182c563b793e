import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runEpisode, type EpisodeResult } from '../../src/episode/run-episode.js';
import { Thread } from '../../src/records/threads.js';
import { gradeWorkspace, type Grade } from '../../src/tasks/grade.js';
import { loadTask, type LoadedTask } from '../../src/tasks/load-task.js';
import type { ReplyServer } from '../../src/toy/reply-server.js';
import { BASE_TOY_WEIGHTS, startToyModel, type ToyWeights } from '../../src/toy/index.js';
import { Workflow } from '../../src/workflow/workflow.js';
import { temporaryDirectory } from '../support/fixtures.js';

const potencyDir = fileURLToPath(new URL('../../suites/demo/demo-potency', import.meta.url));
const volatilityDir = fileURLToPath(new URL('../../suites/demo/demo-volatility', import.meta.url));

interface Run {
  outDir: string;
  result: EpisodeResult;
  threads: Thread[];
  grade: Grade;
}

async function episode(options: {
  server: ReplyServer;
  task: LoadedTask;
  workflow?: Workflow;
  seed: number;
  outDir: string;
}): Promise<Run> {
  const result = await runEpisode({
    taskDir: options.task.dir,
    ...(options.workflow ? { workflow: options.workflow, teacher: true } : {}),
    model: 'mass-toy',
    baseUrl: options.server.baseUrl,
    seed: options.seed,
    outDir: options.outDir,
    timeoutSeconds: 150,
  });
  const threads = readFileSync(join(options.outDir, 'threads.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => Thread.parse(JSON.parse(line)));
  const grade = await gradeWorkspace(options.task, {
    workspaceDir: join(options.outDir, 'workspace'),
    seed: options.seed,
  });
  return { outDir: options.outDir, result, threads, grade };
}

function toolNames(thread: Thread): string[] {
  return thread.segments
    .flatMap((segment) => segment.messages)
    .flatMap((message) => (message.role === 'assistant' ? (message.tool_calls ?? []) : []))
    .map((call) => call.function.name);
}

/** The demo workflow with a check on the reporter and a return hop to the analyst when it fails. */
function workflowWithReturnHop(task: LoadedTask): Workflow {
  const workflow = Workflow.parse(structuredClone(task.manifest.workflow));
  const reporter = workflow.agents.find((agent) => agent.id === 'reporter')!;
  reporter.contract!.fields.push({
    name: 'approved',
    type: 'boolean',
    description: 'True when every check passed.',
  });
  reporter.contract!.checks.push({
    name: 'outputs_complete',
    description: 'results.json has every required key and report.md every section.',
  });
  workflow.hops.push({ from: 'reporter', to: 'analyst', condition: 'approved is false' });
  return Workflow.parse(workflow);
}

describe('the toy model alone on a bare task, and a team sent back for re-work by a return hop', () => {
  const directory = temporaryDirectory('mass-toy-bare-');
  const servers: ReplyServer[] = [];
  let bare: Run;
  let rework: Run;

  beforeAll(async () => {
    const root = realpathSync(directory.path);
    const steady: ToyWeights = { ...BASE_TOY_WEIGHTS, delegateBare: 0, completeReport: 1, careful: 1 };
    // Runs every check, but its first results always forget a key: the reporter's check catches it.
    const sloppy: ToyWeights = {
      ...BASE_TOY_WEIGHTS,
      delegateWithWorkflow: 1,
      runChecks: 1,
      completeReport: 1,
      careful: 0,
    };
    const [steadyServer, sloppyServer] = await Promise.all([
      startToyModel({ weights: steady, modelName: 'mass-toy' }),
      startToyModel({ weights: sloppy, modelName: 'mass-toy' }),
    ]);
    servers.push(steadyServer, sloppyServer);
    const [volatility, potency] = await Promise.all([loadTask(volatilityDir), loadTask(potencyDir)]);
    [bare, rework] = await Promise.all([
      episode({ server: steadyServer, task: volatility, seed: 21, outDir: join(root, 'bare') }),
      episode({
        server: sloppyServer,
        task: potency,
        workflow: workflowWithReturnHop(potency),
        seed: 22,
        outDir: join(root, 'rework'),
      }),
    ]);
  }, 240_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    directory.remove();
  });

  it('does a bare task alone: writes and runs the script itself, no delegation', () => {
    expect(bare.result.record.status).toBe('success');
    expect(bare.result.record.delegations).toBe(0);
    expect(bare.threads.map((thread) => thread.role)).toEqual(['orchestrator']);
    expect(toolNames(bare.threads[0]!)).toEqual(['write_file', 'run_shell_command']);
    expect(readFileSync(join(bare.outDir, 'prompt.md'), 'utf8')).not.toContain('Team workflow');
    expect(bare.grade.score, JSON.stringify(bare.grade.parts)).toBeGreaterThanOrEqual(90);
    console.log(
      `toy episodes: bare ${bare.result.record.timings.durationMs / 1000} s, ${bare.result.record.modelCalls} calls; rework ${rework.result.record.timings.durationMs / 1000} s, ${rework.result.record.modelCalls} calls`,
    );
  });

  it('follows the return hop: the reporter finds the forgotten key, the analyst and reporter work again', () => {
    expect(rework.result.record.status).toBe('success');
    expect(rework.result.record.delegations).toBe(4);
    const orchestrator = rework.threads.find((thread) => thread.role === 'orchestrator')!;
    const calls = orchestrator.segments
      .flatMap((segment) => segment.messages)
      .flatMap((message) => (message.role === 'assistant' ? (message.tool_calls ?? []) : []))
      .map((call) => JSON.parse(call.function.arguments) as { description: string; prompt: string });
    expect(calls.map((call) => call.description)).toEqual([
      expect.stringMatching(/^analyst: /),
      expect.stringMatching(/^reporter: /),
      'analyst: re-work',
      'reporter: re-work',
    ]);
    expect(calls[2]!.prompt).toContain('Re-work requested: reporter reported that approved is false');
    const reports = orchestrator.segments
      .at(-1)!
      .messages.filter((message) => message.role === 'tool')
      .map((message) => JSON.stringify(message.content));
    expect(reports[1]).toContain('- approved: false');
    expect(reports[3]).toContain('- approved: true');
    // The second attempt wrote the key the first forgot: the grader sees complete, accurate results.
    const results = JSON.parse(readFileSync(join(rework.outDir, 'workspace', 'results.json'), 'utf8'));
    expect(results.ec50_uM).toBeGreaterThan(0);
    expect(rework.grade.score, JSON.stringify(rework.grade.parts)).toBeGreaterThanOrEqual(90);
  });
});
