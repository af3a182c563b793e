import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Agent, request } from 'undici';

/**
 * Proxy overhead: throughput (16 clients in parallel) and latency (one client) of requests sent straight to the
 * scripted server and through the recording proxy, measured side by side, alternating, in one run.
 */

const here = fileURLToPath(new URL('.', import.meta.url));
// A mid-episode request: a system prompt and a few turns of tool use, about 24 KB, as agents send them.
const conversation = [
  { role: 'system', content: 'You are Qwen Code, an interactive CLI agent. '.repeat(180) },
  { role: 'user', content: 'Run the backtest in /tmp/ws and report the out-of-sample Sharpe ratio.' },
  ...Array.from({ length: 6 }, (_, turn) => [
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `call_${turn}`,
          type: 'function',
          function: { name: 'run_shell_command', arguments: '{"command":"python3 run.py"}' },
        },
      ],
    },
    { role: 'tool', tool_call_id: `call_${turn}`, content: 'sharpe=0.84 turnover=0.12 '.repeat(80) },
  ]).flat(),
];
const body = (stream: boolean) => JSON.stringify({ model: 'bench', stream, messages: conversation });

function startProcess(script: string, args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, script), ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve({ child, url: chunk.toString().trim() }));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
}

async function call(dispatcher: Agent, origin: string, stream: boolean): Promise<number> {
  const started = performance.now();
  const response = await request(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: body(stream),
    dispatcher,
  });
  await response.body.text();
  if (response.statusCode !== 200) throw new Error(`status ${response.statusCode}`);
  return performance.now() - started;
}

async function throughput(
  dispatcher: Agent,
  origin: string,
  stream: boolean,
  total: number,
  clients: number,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next++ < total) await call(dispatcher, origin, stream);
    }),
  );
  return total / ((performance.now() - started) / 1000);
}

async function latencies(
  dispatcher: Agent,
  origin: string,
  stream: boolean,
  count: number,
): Promise<number[]> {
  const samples: number[] = [];
  for (let index = 0; index < count; index++) samples.push(await call(dispatcher, origin, stream));
  return samples;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

interface Scenario {
  /** Milliseconds before the server's first byte, and between streamed chunks. */
  firstByteMs: number;
  chunkDelayMs: number;
  rounds: number;
  requests: number;
  latencySamples: number;
}

/**
 * Two scenarios: an instant server, where the proxy's own CPU cost competes with the server and the load generator
 * for the machine's cores (the worst case), and a server with model-like timing (a first token after 20 ms, a chunk
 * every millisecond), which is what the proxy sits in front of in practice.
 */
export async function benchProxy(): Promise<Record<string, unknown>> {
  return {
    instantServer: await benchScenario({
      firstByteMs: 0,
      chunkDelayMs: 0,
      rounds: 3,
      requests: 2000,
      latencySamples: 200,
    }),
    modelLikeServer: await benchScenario({
      firstByteMs: 20,
      chunkDelayMs: 1,
      rounds: 3,
      requests: 600,
      latencySamples: 60,
    }),
  };
}

async function benchScenario(scenario: Scenario): Promise<Record<string, unknown>> {
  const { rounds, requests } = scenario;
  const directory = mkdtempSync(join(tmpdir(), 'mass-bench-'));
  const logFile = join(directory, 'requests.jsonl');
  const server = await startProcess('scripted-server-process.ts', [
    String(scenario.firstByteMs),
    String(scenario.chunkDelayMs),
  ]);
  const proxy = await startProcess('proxy-process.ts', [server.url, logFile]);
  const bareRelay = await startProcess('bare-relay-process.ts', [server.url]);
  const dispatcher = new Agent({ connections: 64, keepAliveTimeout: 30_000 });
  const results: Record<string, unknown> = {};
  try {
    for (const stream of [false, true]) {
      const label = stream ? 'streamed' : 'non-streamed';
      // Warm both paths (JIT, connections) before measuring.
      await throughput(dispatcher, server.url, stream, requests / 4, 16);
      await throughput(dispatcher, proxy.url, stream, requests / 4, 16);
      await throughput(dispatcher, bareRelay.url, stream, requests / 4, 16);
      const direct: number[] = [];
      const proxied: number[] = [];
      const relayed: number[] = [];
      const directLatency: number[] = [];
      const proxiedLatency: number[] = [];
      const relayedLatency: number[] = [];
      for (let round = 0; round < rounds; round++) {
        direct.push(await throughput(dispatcher, server.url, stream, requests, 16));
        proxied.push(await throughput(dispatcher, proxy.url, stream, requests, 16));
        relayed.push(await throughput(dispatcher, bareRelay.url, stream, requests, 16));
        directLatency.push(...(await latencies(dispatcher, server.url, stream, scenario.latencySamples)));
        proxiedLatency.push(...(await latencies(dispatcher, proxy.url, stream, scenario.latencySamples)));
        relayedLatency.push(...(await latencies(dispatcher, bareRelay.url, stream, scenario.latencySamples)));
      }
      results[label] = {
        directRequestsPerSecond: Math.round(median(direct)),
        proxiedRequestsPerSecond: Math.round(median(proxied)),
        throughputRatio: Number((median(proxied) / median(direct)).toFixed(3)),
        directMedianLatencyMs: Number(median(directLatency).toFixed(3)),
        proxiedMedianLatencyMs: Number(median(proxiedLatency).toFixed(3)),
        addedMedianLatencyMs: Number((median(proxiedLatency) - median(directLatency)).toFixed(3)),
        bareRelayThroughputRatio: Number((median(relayed) / median(direct)).toFixed(3)),
        bareRelayAddedMedianLatencyMs: Number((median(relayedLatency) - median(directLatency)).toFixed(3)),
        proxyVersusBareRelayThroughput: Number((median(proxied) / median(relayed)).toFixed(3)),
      };
    }
    const rows = readFileSync(logFile, 'utf8').split('\n').filter(Boolean).length;
    results.rowsRecorded = rows;
  } finally {
    await dispatcher.close();
    server.child.kill('SIGTERM');
    proxy.child.kill('SIGTERM');
    bareRelay.child.kill('SIGTERM');
    rmSync(directory, { recursive: true, force: true });
  }
  return results;
}
