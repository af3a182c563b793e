// The judge's model calls in flight, as `mass status` shows them: a judgment (both orders at once) run inside a step
// against a scripted server that holds its answers, read mid-call (the step with its two waiting calls, their age and
// the prompt's size as the server received it); the same calls once answered (none); and the file a killed process
// left (its calls never end, and none of them is shown live).
import { readFile, mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { judgePair, type WorkspaceBundle } from '../../src/judge/index.js';
import { MODEL_CALLS_WRITER } from '../../src/judge/open-model-calls.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { readRunRecords } from '../../src/status/read-run.js';
import { renderStatusText } from '../../src/status/render-text.js';
import { summariseRun } from '../../src/status/summarise.js';
import { openRunDatabase, type RunDatabase } from '../../src/store/database.js';
import { StepRunner } from '../../src/store/step.js';
import type { LoadedTask } from '../../src/tasks/index.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import {
  rightAndWrongBundles,
  removeScratchDirectories,
  tinySumTask,
  verdictJson,
} from '../judge/support.js';

const KEY = 'search/L0/tiny-sum/v1/judge';
let task: LoadedTask;
let bundles: { right: WorkspaceBundle; wrong: WorkspaceBundle };
let run: string;
let database: RunDatabase;
let server: ScriptedServer | undefined;

beforeAll(async () => {
  task = await tinySumTask();
  bundles = await rightAndWrongBundles(task, 'in-flight');
});
afterAll(removeScratchDirectories);
beforeEach(async () => {
  run = join(await mkdtemp(join(tmpdir(), 'mass-model-calls-')), 'run');
  await mkdir(run);
  database = openRunDatabase(join(run, 'mass.db'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  database.close();
  await rm(join(run, '..'), { recursive: true, force: true });
});

async function holdLock(pid: number, acquiredAt: string) {
  await writeFile(
    join(run, 'mass.lock'),
    JSON.stringify({ pid, hostname: hostname(), token: 't', acquiredAt, command: 'mass search' }),
  );
}

const status = async () => summariseRun(await readRunRecords(run, { windowMs: 5 * 60_000 }));

async function until(condition: () => Promise<boolean>) {
  for (let waited = 0; waited < 10_000; waited += 20) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('timed out');
}

const openCalls = async () => {
  try {
    return (JSON.parse(await readFile(join(run, 'model-calls-open.json'), 'utf8')) as { calls: unknown[] })
      .calls.length;
  } catch {
    return -1;
  }
};

describe('judge calls in flight in mass status', () => {
  it('a judgment waiting on both orders: its step, each call with its age and prompt size; none once answered', async () => {
    await holdLock(process.pid, new Date(Date.now() - 60_000).toISOString());
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    server = await startScriptedServer({
      responder: async () => {
        await gate;
        return step.text(verdictJson('A'));
      },
    });
    const model = new OpenAICompatibleModel({ baseUrl: server.baseUrl, retry: { maxAttempts: 1 } });
    const judging = new StepRunner(database, run).run(KEY, async () => {
      await judgePair({
        task,
        x: { label: 'right', bundle: bundles.right },
        y: { label: 'wrong', bundle: bundles.wrong },
        model,
        modelName: 'judge-model',
        mode: 'both',
      });
    });
    await until(async () => server!.requests.length === 2 && (await openCalls()) === 2);

    const waiting = await status();
    const [call] = waiting.inFlight.calls;
    expect(waiting.inFlight.calls).toHaveLength(1);
    expect(call).toMatchObject({ key: KEY, kind: 'judge', state: 'running', attempts: 1 });
    // The prompt's size is what the server received: the characters of each request's messages.
    const sentChars = server.requests.map((request) =>
      (request.body as { messages: Array<{ content: string }> }).messages.reduce(
        (total, message) => total + message.content.length,
        0,
      ),
    );
    expect(call!.modelCalls.map((modelCall) => modelCall.promptChars).sort()).toEqual(sentChars.sort());
    expect(call!.modelCalls.map(({ seq, role, model: name, state }) => ({ seq, role, name, state }))).toEqual(
      [
        { seq: 0, role: 'judge', name: 'judge-model', state: 'waiting' },
        { seq: 1, role: 'judge', name: 'judge-model', state: 'waiting' },
      ],
    );
    expect(call!.modelCalls.every((modelCall) => modelCall.ageMs >= 0 && modelCall.ageMs < 10_000)).toBe(
      true,
    );
    expect(call!.modelCalls[0]!.endpoint).toContain(server.baseUrl);
    const text = renderStatusText(waiting);
    expect(text).toContain('in flight: 0 episodes, 1 judge or optimizer steps (2 model calls waiting)');
    expect(text).toMatch(
      /model call #0 to judge-model \(judge\), \d+s, prompt [\d.]+k? chars, waiting for its answer/,
    );

    release();
    await judging;
    await until(async () => (await openCalls()) === 0);
    const answered = await status();
    expect(answered.inFlight.calls).toEqual([]);
  });

  it('a file left by a killed process: its calls are not live, whoever holds the run now', async () => {
    database
      .prepare(
        "INSERT INTO steps (key, status, attempts, started_at, finished_at, duration_ms, error) VALUES (?, 'started', 1, ?, NULL, NULL, NULL)",
      )
      .run(KEY, new Date(Date.now() - 120_000).toISOString());
    const left = {
      writer: `${hostname()}:999999`,
      calls: [
        {
          seq: 4,
          startedAt: new Date(Date.now() - 100_000).toISOString(),
          role: 'judge',
          model: 'judge-model',
          endpoint: 'openai-compatible http://127.0.0.1:1/v1',
          step: KEY,
          promptChars: 5000,
        },
      ],
    };
    await writeFile(join(run, 'model-calls-open.json'), JSON.stringify(left));
    // Nobody holds the run: the step was stopped, its call is not shown.
    const stopped = await status();
    expect(stopped.run.state).toBe('stopped');
    expect(stopped.inFlight.calls).toEqual([
      expect.objectContaining({ key: KEY, state: 'stopped', modelCalls: [] }),
    ]);
    // This process took the run since (a resumed command, with the same writer name as the file): calls begun
    // before it took the run are still not live.
    await writeFile(
      join(run, 'model-calls-open.json'),
      JSON.stringify({ ...left, writer: MODEL_CALLS_WRITER }),
    );
    await holdLock(process.pid, new Date(Date.now() - 10_000).toISOString());
    const resumed = await status();
    expect(resumed.run.state).toBe('running');
    expect(resumed.inFlight.calls[0]!.modelCalls).toEqual([]);
  });
});
