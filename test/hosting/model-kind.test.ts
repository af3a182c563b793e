import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { parseRunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { modelKind } from '../../src/hosting/model-kind.js';
import { startScriptedServer } from '../../src/testing/scripted-server.js';
import { step } from '../../src/toy/steps.js';
import { BASE_TOY_WEIGHTS, saveToyWeights } from '../../src/toy/weights.js';
import type { ModelGeneration } from '../../src/records/model-generation.js';
import { emptyMetrics } from '../../src/records/training-metrics.js';
import { temporaryDirectory } from '../support/fixtures.js';

const generation = (fields: Partial<ModelGeneration>): ModelGeneration => ({
  name: 'L1',
  parent: 'L0',
  datasetId: 'distill/L0/dataset',
  metrics: emptyMetrics(),
  servedAs: 'run-L1',
  createdAt: new Date(0).toISOString(),
  ...fields,
});

async function chat(baseUrl: string, model: string): Promise<number> {
  const response = await fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
  });
  await response.text();
  return response.status;
}

describe('the model seam', () => {
  const directory = temporaryDirectory('mass-model-kind-');
  afterAll(() => directory.remove());

  it('serves each toy generation with its own weights where every unaddressed role reaches it', async () => {
    const config = parseRunConfig(
      {
        name: 'toy',
        suite: DEMO_SUITE,
        model: { kind: 'toy' },
        roles: { executor: { model: 'mass-toy' } },
      },
      'toy.yaml',
    );
    const { host, anyTokenizer } = modelKind(config);
    expect(anyTokenizer).toBe(true);
    const base = await host.baseWeights(directory.path);
    expect(base).toBe(join(directory.path, 'train', 'L0', 'toy-weights.json'));
    expect(JSON.parse(readFileSync(base, 'utf8'))).toEqual(BASE_TOY_WEIGHTS);

    const weights = join(directory.path, 'L1.json');
    await saveToyWeights(weights, { ...BASE_TOY_WEIGHTS, delegateBare: 1 });
    const served = await host.serve(generation({ mergedPath: weights }), undefined!, directory.path);
    try {
      const { executor, judge, optimizer } = served.endpoints;
      expect(executor).toMatchObject({ provider: 'openai-compatible', model: 'run-L1' });
      // The generation plays every role on its one server, under its name.
      expect(judge).toBe(executor);
      expect(optimizer).toBe(executor);
      expect(await chat(executor.baseUrl!, 'run-L1')).toBe(200);
      expect(await chat(executor.baseUrl!, 'mass-toy')).toBe(404);
    } finally {
      await served.close();
    }
    // An evaluation's judge without an address is served by the toy too; one with an address is left where it is.
    const placed = await host.place({ provider: 'openai-compatible', model: 'toy-judge', maxConcurrency: 1 });
    try {
      expect(await chat(placed.endpoint.baseUrl!, 'toy-judge')).toBe(200);
    } finally {
      await placed.close();
    }
    const elsewhere = { provider: 'anthropic' as const, model: 'claude', maxConcurrency: 1 };
    expect((await host.place(elsewhere)).endpoint).toBe(elsewhere);
  });

  it('reaches a served model where it is, checking that it answers under the generation’s name', async () => {
    const server = await startScriptedServer({
      models: ['Qwen/Qwen3-8B', 'run-L1'],
      responder: () => step.text('ready'),
    });
    try {
      const config = parseRunConfig(
        {
          name: 'run',
          suite: DEMO_SUITE,
          roles: { executor: { baseUrl: server.baseUrl, model: 'Qwen/Qwen3-8B' } },
        },
        'run.yaml',
      );
      const { host, anyTokenizer } = modelKind(config);
      expect(anyTokenizer).toBe(false);
      expect(host.standIn).toBeNull();
      expect(await host.baseWeights(directory.path)).toBe('Qwen/Qwen3-8B');
      const reached = await host.reach(generation({ adapterPath: '/adapters/L1' }));
      expect(reached.endpoints.executor).toMatchObject({ baseUrl: server.baseUrl, model: 'run-L1' });
      await expect(host.reach(generation({ adapterPath: '/a', servedAs: 'run-L2' }))).rejects.toThrow(
        /run-L2/,
      );
      // Reaching deploys nothing: the server was asked what it serves, and L1 asked one question.
      expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
        'GET /v1/models',
        'POST /v1/chat/completions',
        'GET /v1/models',
      ]);
    } finally {
      await server.close();
    }
  });
});
