import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { parseRunConfig, RunConfig, evaluationConfig } from '../src/config/run-config.js';
import { evaluateRun } from '../src/evaluate/evaluate-run.js';
import { runEpisode } from '../src/episode/run-episode.js';
import { systemPromptOf, threadRoleOf } from '../src/harness/qwen-code.js';
import { ChatMessage } from '../src/model/types.js';
import { runSession } from '../src/session/run-session.js';
import { openRun } from '../src/store/run-store.js';
import { startScriptedServer, type ScriptedRequest } from '../src/testing/scripted-server.js';
import { step, type Step } from '../src/toy/steps.js';
import { isJudgeSystemPrompt } from '../src/toy/toy-judge.js';
import { ModelRegistry } from '../src/records/registry.js';

/**
 * `mass eval` at the scale: 3 test tasks × 3 generations × 10 rollouts (90 episodes, 90 pairs judged in both
 * orders by one judge) on a scripted server that takes `LATENCY_MS` per model call, each episode a chain of two calls.
 * The wall time is set against the ideal given the concurrency limits: the episodes in waves of the per-endpoint
 * limit, each wave one chain of model latency, and the judge calls (the external judge and the self-judge) in waves of
 * each judge's limit; against the same ideal with each episode's fixed cost (harness start, sandbox, workspace data)
 * measured alone; and against the processor bound of paying that fixed cost 90 times on this machine's cores.
 */

const SUITE = fileURLToPath(new URL('../suites/research-12', import.meta.url));
const LATENCY_MS = 1000;
const CALLS_PER_EPISODE = 2;
const GENERATIONS = ['L0', 'L1', 'L2'];
const ROLLOUTS = 10;
const EPISODE_LIMIT = 8;
const JUDGE_LIMIT = 8;

function responder(delayMs: number) {
  const timed = (made: Step): Step => ({ ...made, delayMs }) as Step;
  return (request: ScriptedRequest): Step => {
    const messages = ChatMessage.array().parse((request.body as { messages: unknown }).messages);
    const system = systemPromptOf(messages) ?? '';
    if (isJudgeSystemPrompt(system)) {
      return timed(step.text('{"winner": "A", "rationale": "A reads better."}'));
    }
    if (threadRoleOf(system) !== 'orchestrator') return step.text('OK');
    if (!messages.some((message) => message.role === 'assistant')) {
      return timed(step.toolCall('run_shell_command', { command: 'echo done > notes.txt' }));
    }
    return timed(step.text('Done.'));
  };
}

export async function benchEvaluation(): Promise<Record<string, unknown>> {
  const directory = mkdtempSync(join(tmpdir(), 'mass-bench-evaluation-'));
  const server = await startScriptedServer({
    responder: responder(LATENCY_MS),
    models: [...GENERATIONS.map((generation) => `bench-${generation}`), 'bench-judge'],
  });
  try {
    const config = parseRunConfig(
      {
        name: 'bench',
        suite: SUITE,
        roles: { executor: { model: 'bench-L0', baseUrl: server.baseUrl } },
        evaluation: {
          rollouts: ROLLOUTS,
          judgeSeeds: 1,
          judges: [{ baseUrl: server.baseUrl, model: 'bench-judge' }],
          concurrency: { episodes: EPISODE_LIMIT, judgments: JUDGE_LIMIT },
        },
      },
      'the benchmark',
    );
    const runDirectory = join(directory, 'runs', 'bench');
    const registry = await ModelRegistry.open(runDirectory);
    await registry.addBase({ model: 'bench-base', servedAs: 'bench-L0' });
    for (const [index, generation] of GENERATIONS.slice(1).entries()) {
      const weights = join(runDirectory, 'train', generation, 'merged');
      mkdirSync(weights, { recursive: true });
      await registry.add({
        name: generation,
        parent: GENERATIONS[index]!,
        mergedPath: weights,
        datasetId: 'bench',
        servedAs: `bench-${generation}`,
      });
    }

    // One episode alone with instant answers: the fixed cost every episode pays besides model latency.
    const instant = await startScriptedServer({ responder: responder(0), models: ['bench-L0'] });
    const fixedStarted = performance.now();
    await runEpisode({
      taskDir: join(SUITE, 'finance-min-variance'),
      model: 'bench-L0',
      baseUrl: instant.baseUrl,
      seed: 0,
      outDir: join(directory, 'fixed-cost'),
    });
    const fixedMs = performance.now() - fixedStarted;
    await instant.close();

    const run = openRun({
      runsDirectory: join(directory, 'runs'),
      name: 'bench',
      configSchema: RunConfig,
      config,
    });
    const session = runSession(run, SUITE);
    const started = performance.now();
    let summary;
    try {
      summary = await evaluateRun({ session, evaluation: evaluationConfig(config) });
    } finally {
      await session.close();
    }
    const wallMs = performance.now() - started;
    const episodes = summary.counts.episodes;
    const judgeCalls = summary.counts.judgments;
    const callsPerJudge = new Map<string, number>();
    for (const judged of summary.inputs.judgedPairs) {
      callsPerJudge.set(judged.judge, (callsPerJudge.get(judged.judge) ?? 0) + 1);
    }
    // Every generation is served by the one endpoint, so all episodes share its limit; each judge has its own.
    const waves = Math.ceil(episodes / EPISODE_LIMIT);
    const judgeWaves = Math.ceil(Math.max(...callsPerJudge.values()) / JUDGE_LIMIT);
    const chainMs = CALLS_PER_EPISODE * LATENCY_MS;
    // Judge calls start as pairs finish: the last pair's calls follow the last wave, and the busiest judge needs all
    // its waves.
    const ideal = (episodeMs: number) =>
      Math.max(waves * episodeMs + LATENCY_MS, judgeWaves * LATENCY_MS + episodeMs);
    const idealMs = ideal(chainMs);
    const idealWithFixedCostMs = ideal(chainMs + fixedMs);
    // The fixed cost is mostly processor time (the harness starting, the task's data generated): on few cores the
    // episodes cannot all pay it at once.
    const cores = availableParallelism();
    const processorBoundMs = (episodes * fixedMs) / cores;
    return {
      tasks: summary.tasks.length,
      generations: summary.models.length,
      rollouts: ROLLOUTS,
      episodes,
      failedEpisodes: summary.counts.failedEpisodes,
      judges: summary.judges.map((judge) => judge.name),
      judgeCalls,
      modelLatencyPerCallMs: LATENCY_MS,
      limits: { episodesPerEndpoint: EPISODE_LIMIT, judgeCallsPerJudge: JUDGE_LIMIT },
      cores,
      fixedCostOfOneEpisodeMs: Math.round(fixedMs),
      idealWallMs: idealMs,
      idealWithFixedCostMs: Math.round(idealWithFixedCostMs),
      processorBoundMs: Math.round(processorBoundMs),
      wallMs: Math.round(wallMs),
      wallOverIdeal: Number((wallMs / idealMs).toFixed(2)),
      wallOverIdealWithFixedCost: Number((wallMs / idealWithFixedCostMs).toFixed(2)),
      wallOverProcessorBound: Number((wallMs / Math.max(processorBoundMs, idealWithFixedCostMs)).toFixed(2)),
    };
  } finally {
    await server.close();
    rmSync(directory, { recursive: true, force: true });
  }
}
