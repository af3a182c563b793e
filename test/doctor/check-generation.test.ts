import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';

import { doctorAction } from '../../src/cli/commands/doctor.js';
import { parseRunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { doctorPlan } from '../../src/doctor/doctor-plan.js';
import { declareReplicas } from '../../src/model/replicas.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { probeAnswers, trainedRun } from '../hosting/trained-run.js';
import { startFakeVllm, type FakeVllm } from '../train/fake-vllm.js';

const directory = temporaryDirectory('mass-doctor-generation-');
afterAll(() => directory.remove());
const servers: FakeVllm[] = [];
afterEach(async () => {
  for (const server of servers) declareReplicas(server.baseUrl);
  await Promise.all(servers.splice(0).map((server) => server.close()));
  process.exitCode = undefined;
  vi.restoreAllMocks();
});

/** Two replicas serving L1 as `mass-L1` (the second answering as its parent when `stale`), and the run's files. */
async function servedRun(name: string, stale: boolean) {
  for (const answersAsParent of [false, stale]) {
    servers.push(
      await startFakeVllm({ models: ['qwen3', 'mass-L1'], promptLogprobs: probeAnswers(answersAsParent) }),
    );
  }
  const runs = join(directory.path, 'runs');
  await trainedRun(join(runs, name));
  const config = {
    name,
    suite: DEMO_SUITE,
    roles: { executor: { baseUrl: servers[0]!.baseUrl, replicas: [servers[1]!.baseUrl], model: 'qwen3' } },
    rsi: { deploy: { kind: 'lora' } },
  };
  const configFile = join(directory.path, `${name}.yaml`);
  writeFileSync(configFile, JSON.stringify(config));
  return { config, configFile, runs };
}

/** `mass doctor --check-generation L1` in this process: what it prints and its exit code. */
async function checkGeneration(configFile: string, runs: string) {
  const printed: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((text: string) => void printed.push(text));
  await doctorAction({ config: configFile, timeout: '10', checkGeneration: 'L1', runs });
  return { output: printed.join('\n'), exitCode: process.exitCode };
}

describe('mass doctor --check-generation: the deployment check on demand, on every replica', () => {
  it("prints each replica's figures and passes when both serve the generation", async () => {
    const { configFile, runs } = await servedRun('serves', false);
    const { output, exitCode } = await checkGeneration(configFile, runs);
    expect(exitCode).toBeUndefined();
    const [head, ...replicas] = output.split('\n');
    expect(head).toMatch(
      /^deployment check of L1 \(served as mass-L1, bf16 weights\): probe .*train\/L1\/probe\.json, 6 tokens, tolerance 0\.05$/,
    );
    expect(replicas).toEqual(
      servers.map(
        (server) =>
          `  ${server.baseUrl}: serves the generation: mean |Δ log-probability| per probe token 0.0000 from L1, 0.3400 from its parent L0 (tolerance 0.05; training moved the probe by 0.3400)`,
      ),
    );
    // Each replica was asked for the probe under the generation's name.
    for (const server of servers) {
      expect(server.requests.filter((request) => request.path === '/v1/completions')).toHaveLength(1);
    }
  });

  it('exits 2 naming the replica that answers as the parent', async () => {
    const { configFile, runs } = await servedRun('stale', true);
    const { output, exitCode } = await checkGeneration(configFile, runs);
    expect(exitCode).toBe(2);
    expect(output).toContain(
      `  ${servers[1]!.baseUrl}: MISMATCH: mean |Δ log-probability| per probe token 0.3400 from L1, 0.0000 from its parent L0`,
    );
    expect(output).toContain(
      `the deployment check failed: ${servers[1]!.url} serves mass-L1, but it answers as the parent L0`,
    );
  });

  it("plans mass doctor's checks on each replica as a server of its own", async () => {
    const { config } = await servedRun('plan', false);
    const plan = doctorPlan(parseRunConfig(config, 'plan.yaml'));
    expect(plan.endpoints.map((endpoint) => [endpoint.baseUrl, endpoint.roles])).toEqual(
      servers.map((server) => [server.baseUrl, ['executor', 'judge', 'optimizer']]),
    );
  });
});
