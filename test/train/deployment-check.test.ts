import { afterEach, describe, expect, it } from 'vitest';

import { SystemError, UserError } from '../../src/errors.js';
import { checkDeployment, PROBE_TOLERANCE, type DeploymentProbe } from '../../src/train/deployment-check.js';
import { startFakeVllm, type FakeVllm } from './fake-vllm.js';

// A probe as the trainer writes it: training moved every token's log-probability by 0.3 on average.
const tokens = [5, 9, 2, 14, 7, 3];
const parent = [-2.1, -0.7, -3.3, -1.2, -0.4];
const trained = [-1.7, -0.3, -3.0, -0.9, -0.2];
const probe: DeploymentProbe = {
  schemaVersion: 1,
  kind: 'deployment-probe',
  tokens,
  parent,
  trained,
  trainedWeights: 'the merged model',
  maxGenerationChange: 0.4,
};
const nudged = (values: number[], by: number) => values.map((value, index) => value + (index % 2 ? by : -by));

let server: FakeVllm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function check(
  answer: (model: string, tokens: number[]) => number[] | undefined,
  servedAs = 'mass-L1',
) {
  server = await startFakeVllm({ models: ['qwen3', 'mass-L1'], promptLogprobs: answer });
  return checkDeployment({
    server: { baseUrl: server.baseUrl },
    servedAs,
    generation: 'L1',
    parent: 'L0',
    probe,
    tolerance: PROBE_TOLERANCE.bf16,
  });
}

describe('the deployment check', () => {
  it("passes a server that answers with the trained weights' log-probabilities, within serving noise", async () => {
    const result = await check(() => nudged(trained, 0.01));
    expect(result.meanDifferenceFromGeneration).toBeCloseTo(0.01, 6);
    expect(result.meanDifferenceFromParent).toBeGreaterThan(0.25);
    expect(result.distinguishable).toBe(true);
    const body = server!.requests.find((request) => request.path === '/v1/completions')!.body;
    expect(body).toMatchObject({ model: 'mass-L1', prompt: tokens, prompt_logprobs: 0, max_tokens: 1 });
  });

  it('stops on a server that answers as the parent, and says so', async () => {
    const failure = check(() => nudged(parent, 0.01));
    await expect(failure).rejects.toThrow(SystemError);
    await expect(failure).rejects.toThrow(
      /serves mass-L1, but it answers as the parent L0: the deployment did not take effect/,
    );
  });

  it('stops on a server that answers as something else', async () => {
    await expect(check(() => parent.map(() => -9))).rejects.toThrow(/answers as neither L1 nor its parent/);
  });

  it('stops on a server that does not serve the generation at all', async () => {
    const failure = check(() => undefined);
    await expect(failure).rejects.toThrow(UserError);
    await expect(failure).rejects.toThrow(/answered 404/);
  });
});
