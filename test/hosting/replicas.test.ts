import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { parseRunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { servedHost } from '../../src/hosting/served-host.js';
import { OpenAICompatibleModel } from '../../src/model/openai-compatible.js';
import { declareReplicas, ReplicaSet } from '../../src/model/replicas.js';
import { readProxyLog } from '../../src/proxy/log-row.js';
import { startRecordingProxy } from '../../src/proxy/recording-proxy.js';
import { modelsEndpointProbe } from '../../src/search/outage-gate.js';
import { startScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { ModelRegistry } from '../../src/records/registry.js';
import { postCompletion, temporaryDirectory } from '../support/fixtures.js';
import { startFakeVllm } from '../train/fake-vllm.js';
import { probeAnswers, trainedRun } from './trained-run.js';

const directory = temporaryDirectory('mass-replicas-');
afterAll(() => directory.remove());

describe('a replica set: the least loaded healthy replica, outages per replica', () => {
  it('takes turns among equals, prefers the least loaded, and skips a replica in outage for a doubling cooldown', () => {
    let now = 0;
    const set = new ReplicaSet(['http://a/v1', 'http://b/v1'], { cooldownMs: 100, now: () => now });
    const first = set.pick();
    const second = set.pick();
    expect([first.address, second.address]).toEqual(['http://a/v1', 'http://b/v1']);
    first.done('ok');
    // b still has a call in flight: a is the less loaded.
    expect(set.pick().address).toBe('http://a/v1');
    second.done('failed');
    expect(set.states().map((state) => [state.address, state.inFlight, state.inOutage])).toEqual([
      ['http://a/v1', 1, false],
      ['http://b/v1', 0, true],
    ]);
    // In outage, b is skipped though it is the less loaded; after its cooldown it gets a call again.
    expect(set.pick().address).toBe('http://a/v1');
    now = 100;
    const retry = set.pick();
    expect(retry.address).toBe('http://b/v1');
    retry.done('failed');
    now = 250;
    expect(set.states()[1]!.inOutage).toBe(true); // a second failure in a row: 200 ms
    // Every replica down (a until 350, b until 300): the one whose cooldown ends first.
    const a = set.pick();
    expect(a.address).toBe('http://a/v1');
    a.done('failed');
    expect(set.pick().address).toBe('http://b/v1');
  });
});

describe('replicas: calls go to the least loaded healthy replica', () => {
  it('spreads episodes over two replicas, one failing at first: no call is lost, and each row names its replica', async () => {
    const a = await startScriptedServer({ responder: () => step.text('from a', { delayMs: 30 }) });
    // Replica b is down for its first four requests (a server restarting), then answers like a.
    let refused = 0;
    const b = await startScriptedServer({
      responder: () =>
        refused++ < 4 ? step.status(503, { message: 'restarting' }) : step.text('from b', { delayMs: 30 }),
    });
    const [first, second] = [a.baseUrl, b.baseUrl];
    declareReplicas(first, [second], { cooldownMs: 40, maxCooldownMs: 200 });
    /** Four episodes at once, each behind its own recording proxy as an episode is, six calls each. */
    const runEpisodes = (round: string) =>
      Promise.all(
        [0, 1, 2, 3].map(async (index) => {
          const logFile = join(directory.path, `${round}-episode-${index}.jsonl`);
          const proxy = await startRecordingProxy({
            upstream: first,
            listen: { host: '127.0.0.1', port: 0 },
            logFile,
            retry: { initialDelayMs: 5, maxDelayMs: 20, maxTotalMs: 10_000 },
          });
          const statuses: number[] = [];
          for (let call = 0; call < 6; call++) {
            const response = await postCompletion(proxy.url, { stream: call % 2 === 0 });
            await response.text();
            statuses.push(response.status);
          }
          await proxy.close();
          return { statuses, rows: await readProxyLog(logFile) };
        }),
      );
    try {
      // While b fails, its calls go on to a: none is lost, and every attempt names where it went.
      const outage = await runEpisodes('outage');
      const outageRows = outage.flatMap((episode) => episode.rows);
      expect(outage.flatMap((episode) => episode.statuses)).toEqual(Array(24).fill(200));
      expect(outageRows.every((row) => row.replica === first || row.replica === second)).toBe(true);
      const refusedAttempts = outageRows
        .flatMap((row) => row.attempts ?? [])
        .filter((attempt) => attempt.status === 503);
      expect(refusedAttempts).toHaveLength(4);
      expect(refusedAttempts.every((attempt) => attempt.replica === second && attempt.delayMs !== null)).toBe(
        true,
      );
      const retried = outageRows.filter((row) => (row.attempts?.length ?? 1) > 1);
      expect(retried.length).toBeGreaterThan(0);
      expect(
        retried.every((row) => row.status === 200 && row.replica === row.attempts!.at(-1)!.replica),
      ).toBe(true);
      expect(retried.some((row) => row.replica === first)).toBe(true);

      // Once b answers again (its cooldown over), the calls split by load: two in flight on each.
      await new Promise((resolve) => setTimeout(resolve, 250));
      const healthy = await runEpisodes('healthy');
      const rows = healthy.flatMap((episode) => episode.rows);
      expect(healthy.flatMap((episode) => episode.statuses)).toEqual(Array(24).fill(200));
      const answered = (server: string) => rows.filter((row) => row.replica === server).length;
      expect(answered(first) + answered(second)).toBe(24);
      expect(Math.abs(answered(first) - answered(second))).toBeLessThanOrEqual(4);

      // The judge's and optimizer's client given the same address spreads its calls too.
      const judge = new OpenAICompatibleModel({ baseUrl: a.baseUrl, retry: { initialDelayMs: 5 } });
      const before = { a: a.requests.length, b: b.requests.length };
      const request = { model: 'scripted-model', messages: [{ role: 'user' as const, content: 'judge' }] };
      await Promise.all([0, 1, 2, 3].map(() => judge.complete(request)));
      expect(a.requests.length - before.a).toBe(2);
      expect(b.requests.length - before.b).toBe(2);
      // A stream holds its replica until it ends: two at once go one to each.
      const drain = async () => {
        for await (const event of judge.stream(request)) if (event.type === 'finish') return event.response;
      };
      const streamed = await Promise.all([drain(), drain()]);
      expect(streamed.map((response) => response?.message.content).sort()).toEqual(['from a', 'from b']);

      // The outage gate waits only while every replica is down.
      const probe = modelsEndpointProbe(a.baseUrl);
      await a.close();
      expect(await probe()).toBe(true);
      await b.close();
      expect(await probe()).toBe(false);
    } finally {
      declareReplicas(first);
      await Promise.allSettled([a.close(), b.close()]);
    }
  });
});

/** Two vLLM replicas serving `qwen3` with runtime LoRA; the second answers as the parent when `secondStale`. */
async function replicatedRun(name: string, secondStale: boolean) {
  const replica = (stale: boolean) =>
    startFakeVllm({
      models: ['qwen3'],
      runtimeLora: true,
      sleepMode: true,
      promptLogprobs: probeAnswers(stale),
    });
  const [first, second] = [await replica(false), await replica(secondStale)];
  const runDirectory = join(directory.path, name);
  const { registry, l1 } = await trainedRun(runDirectory);
  const config = parseRunConfig(
    {
      name,
      suite: DEMO_SUITE,
      roles: { executor: { baseUrl: first.baseUrl, replicas: [second.baseUrl], model: 'qwen3' } },
      rsi: { deploy: { kind: 'lora' }, sleepDuringTraining: true },
    },
    'rsi.yaml',
  );
  const close = async () => {
    declareReplicas(first.baseUrl);
    await Promise.all([first.close(), second.close()]);
  };
  return { host: servedHost(config), registry, l1, runDirectory, first, second, close };
}

describe('replicas in the configuration', () => {
  const config = (executor: Record<string, unknown>) =>
    parseRunConfig(
      { name: 'r', suite: DEMO_SUITE, roles: { executor: { model: 'qwen3', ...executor } } },
      'run.yaml',
    );

  it('refuses replicas without a baseUrl, and a replica on another scheme, naming the field', () => {
    expect(() => config({ replicas: ['http://10.0.0.2:8000/v1'] })).toThrow(
      /roles\.executor\.replicas.*give baseUrl too/s,
    );
    expect(() =>
      config({ baseUrl: 'http://10.0.0.1:8000/v1', replicas: ['https://10.0.0.2:8000/v1'] }),
    ).toThrow(/roles\.executor\.replicas\.0.*another scheme than baseUrl/s);
  });

  it('loads a configuration without replicas as before', () => {
    expect(config({ baseUrl: 'http://10.0.0.1:8000/v1' }).roles.executor.replicas).toBeUndefined();
  });
});

describe('replicas: a deployment and its check reach every replica', () => {
  it('loads the adapter into both replicas and records the check of each', async () => {
    const run = await replicatedRun('both', false);
    try {
      await run.host.serve(run.l1, run.registry, run.runDirectory);
      for (const replica of [run.first, run.second]) {
        const loads = replica.requests.filter((request) => request.path === '/v1/load_lora_adapter');
        expect(loads.map((request) => request.body)).toEqual([
          { lora_name: 'mass-L1', lora_path: run.l1.adapterPath },
        ]);
        expect(replica.models().map((model) => model.id)).toEqual(['qwen3', 'mass-L1']);
        expect(replica.requests.some((request) => request.path === '/v1/completions')).toBe(true);
      }
      const check = (await ModelRegistry.open(run.runDirectory)).require('L1').deploymentCheck!;
      expect(check.replicas!.map((replica) => replica.baseUrl)).toEqual([
        run.first.baseUrl,
        run.second.baseUrl,
      ]);
      expect(check.replicas!.map((replica) => replica.meanDifferenceFromGeneration)).toEqual([0, 0]);
    } finally {
      await run.close();
    }
  });

  it('puts every replica to sleep while a generation trains, and wakes each after', async () => {
    const run = await replicatedRun('sleeps', false);
    try {
      const paths = () =>
        [run.first, run.second].map((replica) => replica.requests.map((request) => request.path));
      const whileTraining = await run.host.duringTraining!(async () => paths());
      for (const requests of whileTraining) {
        expect(requests).toContain('/sleep?level=1');
        expect(requests).not.toContain('/wake_up');
      }
      for (const requests of paths()) {
        expect(requests.indexOf('/wake_up')).toBeGreaterThan(requests.indexOf('/sleep?level=1'));
      }
    } finally {
      await run.close();
    }
  });

  it('stops naming the replica that still answers as the parent', async () => {
    const run = await replicatedRun('stale', true);
    try {
      const root = run.second.url;
      await expect(run.host.serve(run.l1, run.registry, run.runDirectory)).rejects.toThrow(
        `the deployment check failed: ${root} serves mass-L1, but it answers as the parent L0`,
      );
      expect(run.registry.require('L1').deploymentCheck).toBeUndefined();
    } finally {
      await run.close();
    }
  });
});
