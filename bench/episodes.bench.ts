import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { runEpisode } from '../src/episode/run-episode.js';
import { runEpisodes } from '../src/episode/run-episodes.js';
import { startScriptedServer } from '../src/testing/scripted-server.js';
import { scriptedTeam } from '../src/testing/scripted-team.js';
import { step, type Step } from '../src/testing/steps.js';

/**
 * Episodes at scale: 16 episodes at once against a scripted server that takes 200 ms per model call, each a team of
 * an orchestrator and two subagents (7 model calls in one chain), against the ideal wall time (the longest chain of
 * model latency, 1.4 s); and the fixed cost of one episode (harness start, sandbox, proxy) with instant answers.
 */

const taskDir = fileURLToPath(new URL('../test/fixtures/tasks/tiny-sum', import.meta.url));
const LATENCY_MS = 200;
const CALLS_IN_CHAIN = 7;

function team(delayMs: number) {
  const timed = (made: Step): Step => ({ ...made, delayMs }) as Step;
  return scriptedTeam({
    orchestrator: [
      timed(step.toolCall('agent', { description: 'one', prompt: 'STAGE ONE', run_in_background: false })),
      timed(step.toolCall('agent', { description: 'two', prompt: 'STAGE TWO', run_in_background: false })),
      timed(step.text('done')),
    ],
    subagents: [
      {
        task: 'STAGE ONE',
        steps: [timed(step.toolCall('run_shell_command', { command: 'true' })), timed(step.text('ok'))],
      },
      {
        task: 'STAGE TWO',
        steps: [timed(step.toolCall('run_shell_command', { command: 'true' })), timed(step.text('ok'))],
      },
    ],
  });
}

export async function benchEpisodes(options: { concurrent?: number } = {}): Promise<Record<string, unknown>> {
  const concurrent = options.concurrent ?? 16;
  const directory = mkdtempSync(join(tmpdir(), 'mass-bench-episodes-'));
  try {
    const instant = await startScriptedServer({
      responder: scriptedTeam({ orchestrator: [step.text('done')] }).responder,
    });
    const single: Array<{ totalMs: number; harnessMs: number; harnessCpuSeconds: number }> = [];
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      const { record } = await runEpisode({
        taskDir,
        model: 'm',
        baseUrl: instant.baseUrl,
        seed: run,
        outDir: join(directory, `single-${run}`),
      });
      if (record.status !== 'success') throw new Error(`benchmark episode failed: ${record.failure?.detail}`);
      single.push({
        totalMs: performance.now() - started,
        harnessMs: record.timings.harnessMs,
        harnessCpuSeconds: record.sandbox.cpuSeconds,
      });
    }
    await instant.close();

    const scripted = team(LATENCY_MS);
    const slow = await startScriptedServer({ responder: scripted.responder });
    const started = performance.now();
    const outcomes = await runEpisodes(
      Array.from({ length: concurrent }, (_, index) => ({
        taskDir,
        model: 'm',
        baseUrl: slow.baseUrl,
        seed: index,
        outDir: join(directory, `concurrent-${index}`),
      })),
      { concurrency: concurrent },
    );
    const wallMs = performance.now() - started;
    await slow.close();
    const succeeded = outcomes.filter(
      (outcome) => outcome.ok && outcome.result.record.status === 'success',
    ).length;
    const idealMs = CALLS_IN_CHAIN * LATENCY_MS;
    const median = [...single].sort((a, b) => a.totalMs - b.totalMs)[1]!;
    return {
      fixedCostOfOneEpisodeMs: Math.round(median.totalMs),
      // Of which the harness (qwen-code starting and answering one instant call) and what is ours.
      harnessMs: median.harnessMs,
      harnessCpuSeconds: Number(median.harnessCpuSeconds.toFixed(2)),
      oursMs: Math.round(median.totalMs - median.harnessMs),
      concurrentEpisodes: concurrent,
      succeeded,
      modelLatencyPerCallMs: LATENCY_MS,
      idealWallMs: idealMs,
      wallMs: Math.round(wallMs),
      wallOverIdeal: Number((wallMs / idealMs).toFixed(2)),
      problems: scripted.problems.slice(0, 3),
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
