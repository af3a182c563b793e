import { join } from 'node:path';

import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { parseRunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { servedHost } from '../../src/hosting/served-host.js';
import { ModelRegistry } from '../../src/records/registry.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { startFakeVllm, type FakeVllm } from '../train/fake-vllm.js';
import { probeAnswers, trainedRun as registeredL1 } from './trained-run.js';

const directory = temporaryDirectory('mass-served-deploy-');
afterAll(() => directory.remove());
let server: FakeVllm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A run with L0 served as `qwen3` and L1 trained as an adapter, its probe in train/L1/probe.json. */
async function trainedRun(name: string, answers: 'generation' | 'parent') {
  server = await startFakeVllm({
    models: ['qwen3'],
    runtimeLora: true,
    sleepMode: true,
    promptLogprobs: probeAnswers(answers === 'parent'),
  });
  const runDirectory = join(directory.path, name);
  const { registry, l1 } = await registeredL1(runDirectory);
  const config = parseRunConfig(
    {
      name,
      suite: DEMO_SUITE,
      roles: { executor: { baseUrl: server.baseUrl, model: 'qwen3' } },
      rsi: { deploy: { kind: 'lora' }, sleepDuringTraining: true },
    },
    'rsi.yaml',
  );
  return { host: servedHost(config), registry, l1, runDirectory };
}

describe('a served generation is deployed, then checked before any episode runs on it', () => {
  it("passes when the server answers with the trained weights' log-probabilities, and records the figures", async () => {
    const { host, registry, l1, runDirectory } = await trainedRun('passes', 'generation');
    await host.serve(l1, registry, runDirectory);
    const check = (await ModelRegistry.open(runDirectory)).require('L1').deploymentCheck!;
    expect(check).toMatchObject({ servedAs: 'mass-L1', weights: 'bf16', tokens: 6, tolerance: 0.05 });
    expect(check.meanDifferenceFromGeneration).toBe(0);
    expect(check.meanDifferenceFromParent).toBeCloseTo(0.34, 6);
  });

  it('stops when the adapter "loaded" but the server answers as the parent', async () => {
    const { host, registry, l1, runDirectory } = await trainedRun('parent', 'parent');
    await expect(host.serve(l1, registry, runDirectory)).rejects.toThrow(
      /serves mass-L1, but it answers as the parent L0: the deployment did not take effect/,
    );
    expect(registry.require('L1').deploymentCheck).toBeUndefined();
  });

  it('puts the server to sleep while a generation trains, and wakes it after', async () => {
    const { host } = await trainedRun('sleeps', 'generation');
    const fake = server!;
    const asleep = await host.duringTraining!(async () =>
      fake.requests.some((request) => request.path === '/sleep?level=1'),
    );
    expect(asleep).toBe(true);
    expect(fake.requests.at(-2)!.path).toBe('/wake_up');
  });
});
