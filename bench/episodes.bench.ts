import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { runEpisode } from '../src/episode/run-episode.js';
import { runEpisodes } from '../src/episode/run-episodes.js';
import { harnessNode, runningNode, type HarnessNode } from '../src/harness/harness-node.js';
import { contentText, systemPromptOf, threadRoleOf } from '../src/harness/qwen-code.js';
import type { HarnessProfile } from '../src/harness/qwen-settings.js';
import { loadTokenCounter } from '../src/model/token-counter.js';
import type { ChatMessage } from '../src/model/types.js';
import { readProxyLog } from '../src/proxy/log-row.js';
import { startScriptedServer } from '../src/testing/scripted-server.js';
import { scriptedTeam } from '../src/testing/scripted-team.js';
import { step, type Step } from '../src/toy/steps.js';
import { runBareHarness } from './bare-harness.js';

/**
 * Episodes at scale, before and after the harness got its own Node and the lean profile, side by side in one run.
 * Before: qwen-code on this process's Node (20), no compile cache, the `stock` profile. After: the harness's Node
 * (22 from harness-node/) with its compile cache, the `lean` profile.
 *
 * - one-call episodes with instant answers: an episode's fixed cost (harness start, sandbox, proxy) and the harness's
 *   CPU seconds;
 * - 16 concurrent team episodes (an orchestrator and two subagents, 7 model calls of 200 ms in one chain) against the
 *   ideal (the chain's model latency, 1.4 s) and against a floor: the same 16 harness runs started directly on
 *   Node 20, without sandbox or proxy;
 * - prompt tokens of the orchestrator's first request and a subagent's (Qwen3's tokenizer over the messages' text and
 *   the tools' JSON), stock against lean;
 * - the whole `mass episode` command (dist/, two model calls) against the bare harness on Node 20, medians of three.
 * The machine's load average is reported with the figures: compare ratios, measured in the same run.
 */

const taskDir = fileURLToPath(new URL('../test/fixtures/tasks/tiny-sum', import.meta.url));
const massBin = fileURLToPath(new URL('../bin/mass.js', import.meta.url));
const cli = createRequire(import.meta.url).resolve('@qwen-code/qwen-code/cli-entry.js');
const LATENCY_MS = 200;
const CALLS_IN_CHAIN = 7;
const RUNS = 3;

interface Variant {
  name: 'before' | 'after';
  node: HarnessNode;
  profile: HarnessProfile;
}

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

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const round2 = (value: number): number => Number(value.toFixed(2));
const load = (): number => round2(loadavg()[0]!);

export async function benchEpisodes(options: { concurrent?: number } = {}): Promise<Record<string, unknown>> {
  const concurrent = options.concurrent ?? 16;
  const directory = mkdtempSync(join(tmpdir(), 'mass-bench-episodes-'));
  const variants: Variant[] = [
    { name: 'before', node: runningNode(), profile: 'stock' },
    { name: 'after', node: await harnessNode(cli), profile: 'lean' },
  ];
  const loadAtStart = load();
  try {
    // One instant call: the fixed cost of an episode, alternating the variants.
    const instant = await startScriptedServer({
      responder: scriptedTeam({ orchestrator: [step.text('done')] }).responder,
    });
    const single: Record<string, Array<{ totalMs: number; harnessMs: number; cpuSeconds: number }>> = {
      before: [],
      after: [],
    };
    for (let run = 0; run < RUNS; run++) {
      for (const variant of variants) {
        const started = performance.now();
        const { record } = await runEpisode({
          taskDir,
          model: 'm',
          baseUrl: instant.baseUrl,
          seed: run,
          outDir: join(directory, `single-${variant.name}-${run}`),
          harnessNode: variant.node,
          harnessProfile: variant.profile,
        });
        if (record.status !== 'success')
          throw new Error(`benchmark episode failed: ${record.failure?.detail}`);
        single[variant.name]!.push({
          totalMs: performance.now() - started,
          harnessMs: record.timings.harnessMs,
          cpuSeconds: record.sandbox.cpuSeconds,
        });
      }
    }
    await instant.close();
    const prompt = readFileSync(join(directory, 'single-after-0', 'prompt.md'), 'utf8');
    const singleFigures = (name: string) => {
      const runs = single[name]!;
      return {
        fixedCostOfOneEpisodeMs: Math.round(median(runs.map((run) => run.totalMs))),
        harnessMs: Math.round(median(runs.map((run) => run.harnessMs))),
        harnessCpuSeconds: round2(median(runs.map((run) => run.cpuSeconds))),
      };
    };

    // 16 team episodes at once, per variant, then the floor: the same harness runs, bare, on Node 20.
    const concurrentFigures: Record<string, unknown> = {};
    const wall: Record<string, number> = {};
    const problems: unknown[] = [];
    for (const variant of variants) {
      const scripted = team(LATENCY_MS);
      const slow = await startScriptedServer({ responder: scripted.responder });
      const loadBefore = load();
      const started = performance.now();
      const outcomes = await runEpisodes(
        Array.from({ length: concurrent }, (_, index) => ({
          taskDir,
          model: 'm',
          baseUrl: slow.baseUrl,
          seed: index,
          outDir: join(directory, `concurrent-${variant.name}-${index}`),
          harnessNode: variant.node,
          harnessProfile: variant.profile,
        })),
        { concurrency: concurrent },
      );
      wall[variant.name] = performance.now() - started;
      await slow.close();
      problems.push(...scripted.problems.slice(0, 3));
      concurrentFigures[variant.name] = {
        wallMs: Math.round(wall[variant.name]!),
        succeeded: outcomes.filter((outcome) => outcome.ok && outcome.result.record.status === 'success')
          .length,
        loadAverage: loadBefore,
      };
    }
    const floorTeam = team(LATENCY_MS);
    const floorServer = await startScriptedServer({ responder: floorTeam.responder });
    const floorLoad = load();
    const floorStarted = performance.now();
    await Promise.all(
      Array.from({ length: concurrent }, (_, index) =>
        runBareHarness({
          node: process.execPath,
          baseUrl: floorServer.url,
          prompt,
          directory: join(directory, `floor-${index}`),
          profile: 'stock',
        }),
      ),
    );
    const floorMs = performance.now() - floorStarted;
    await floorServer.close();
    problems.push(...floorTeam.problems.slice(0, 3));
    const idealMs = CALLS_IN_CHAIN * LATENCY_MS;

    // Prompt tokens of the first orchestrator and subagent requests, stock (before) against lean (after).
    const counter = await loadTokenCounter();
    const promptTokens: Record<string, unknown> = {};
    for (const variant of variants) {
      const requests = (
        await readProxyLog(join(directory, `concurrent-${variant.name}-0`, 'requests.jsonl'))
      ).map((row) => row.request as { messages: ChatMessage[]; tools?: unknown[] });
      const tokens = (role: string) => {
        const request = requests.find(
          (candidate) => threadRoleOf(systemPromptOf(candidate.messages)) === role,
        );
        if (!request) return null;
        const text = request.messages.map((message) => contentText(message.content)).join('\n');
        return counter.count(text) + counter.count(JSON.stringify(request.tools ?? []));
      };
      promptTokens[variant.profile] = { orchestrator: tokens('orchestrator'), subagent: tokens('subagent') };
    }

    // The whole command against the bare harness on Node 20: two model calls each, alternating.
    const twoCalls = () =>
      scriptedTeam({
        orchestrator: [step.toolCall('run_shell_command', { command: 'true' }), step.text('done')],
      }).responder;
    const command: number[] = [];
    const bare: number[] = [];
    const commandLoad = load();
    for (let run = 0; run < RUNS; run++) {
      const server = await startScriptedServer({ responder: twoCalls() });
      const started = performance.now();
      await promisify(execFile)(process.execPath, [
        massBin,
        'episode',
        '--task',
        taskDir,
        '--model',
        'm',
        '--base-url',
        server.baseUrl,
        '--seed',
        String(run),
        '--out',
        join(directory, `command-${run}`),
        '--json',
      ]);
      command.push(performance.now() - started);
      await server.close();
      const bareServer = await startScriptedServer({ responder: twoCalls() });
      bare.push(
        await runBareHarness({
          node: process.execPath,
          baseUrl: bareServer.url,
          prompt,
          directory: join(directory, `bare-${run}`),
          profile: 'stock',
        }),
      );
      await bareServer.close();
    }

    const before = singleFigures('before');
    const after = singleFigures('after');
    return {
      loadAverage: { atStart: loadAtStart, atEnd: load() },
      harnessNode: { before: variants[0]!.node.version, after: variants[1]!.node.version },
      oneCallEpisode: { before, after },
      harnessCpuAfterOverBefore: round2(after.harnessCpuSeconds / before.harnessCpuSeconds),
      fixedCostAfterOverBefore: round2(after.fixedCostOfOneEpisodeMs / before.fixedCostOfOneEpisodeMs),
      concurrentEpisodes: concurrent,
      modelLatencyPerCallMs: LATENCY_MS,
      idealWallMs: idealMs,
      concurrent: concurrentFigures,
      floorWallMs: Math.round(floorMs),
      floorLoadAverage: floorLoad,
      wallAfterOverBefore: round2(wall.after! / wall.before!),
      wallOverIdeal: { before: round2(wall.before! / idealMs), after: round2(wall.after! / idealMs) },
      wallOverFloor: { before: round2(wall.before! / floorMs), after: round2(wall.after! / floorMs) },
      promptTokens,
      massEpisodeCommand: {
        loadAverage: commandLoad,
        commandMs: Math.round(median(command)),
        bareHarnessOnNode20Ms: Math.round(median(bare)),
        commandOverBareHarness: round2(median(command) / median(bare)),
      },
      problems: problems.slice(0, 3),
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
