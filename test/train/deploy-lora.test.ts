import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { SystemError, UserError } from '../../src/errors.js';
import { deployGeneration } from '../../src/train/deploy.js';
import type { ModelGeneration } from '../../src/records/model-generation.js';
import { startScriptedServer } from '../../src/testing/scripted-server.js';
import { startFakeVllm, type FakeVllm } from './fake-vllm.js';
import { baseGeneration } from './support.js';

const KEY_VARIABLE = 'MASS_TEST_DEPLOY_KEY';
const KEY = 'sk-deploy-secret-0123';

const base = baseGeneration({ servedAs: 'qwen3' });
const l1: ModelGeneration = baseGeneration({
  name: 'L1',
  parent: 'L0',
  mergedPath: undefined,
  adapterPath: '/runs/r/train/L1/checkpoints/step-000150',
  datasetId: 'distill/L0/dataset',
  servedAs: 'mass-L1',
});

let servers: Array<{ close(): Promise<void> }> = [];
async function vllm(options: Partial<Parameters<typeof startFakeVllm>[0]> = {}): Promise<FakeVllm> {
  const server = await startFakeVllm({ models: ['qwen3'], runtimeLora: true, apiKey: KEY, ...options });
  servers.push(server);
  return server;
}

beforeAll(() => {
  process.env[KEY_VARIABLE] = KEY;
});
afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});
afterAll(() => {
  delete process.env[KEY_VARIABLE];
});

const deploy = (
  server: { baseUrl: string },
  generation = l1,
  over: ModelGeneration | undefined = base,
  replaces?: ModelGeneration[],
) =>
  deployGeneration({
    server: { baseUrl: server.baseUrl, apiKeyEnv: KEY_VARIABLE },
    generation,
    base: over,
    replaces,
    method: { kind: 'lora' },
  });

async function failure(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught as Error,
  );
  if (!error) throw new Error('expected a failure');
  expect(error.message).not.toContain(KEY);
  return error;
}

describe('deploying an adapter by vLLM runtime LoRA loading', () => {
  it('loads it under the served name with the key, and checks that the model answers', async () => {
    const server = await vllm();
    await expect(deploy(server)).resolves.toEqual({
      servedAs: 'mass-L1',
      method: 'lora',
      alreadyServed: false,
    });

    expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'GET /v1/models',
      'POST /v1/load_lora_adapter',
      'GET /v1/models',
      'POST /v1/chat/completions',
    ]);
    expect(server.requests[1]!.body).toEqual({ lora_name: 'mass-L1', lora_path: l1.adapterPath });
    expect(server.requests[3]!.body).toMatchObject({ model: 'mass-L1', max_tokens: 16 });
    expect(server.requests.every((request) => request.headers.authorization === `Bearer ${KEY}`)).toBe(true);
  });

  it('does nothing but check when the same adapter is already served under the name (a resumed run)', async () => {
    const server = await vllm();
    await deploy(server);
    await expect(deploy(server)).resolves.toMatchObject({ alreadyServed: true });
    expect(server.requests.filter((request) => request.path === '/v1/load_lora_adapter')).toHaveLength(1);
  });

  it('refuses a served name taken by other weights, and a server that does not serve the parent', async () => {
    const taken = await vllm({ models: ['qwen3', 'mass-L1'] });
    const error = await failure(deploy(taken));
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toMatch(
      /already serves a model named mass-L1 \(from \/models\/mass-L1\): unload it/,
    );

    const other = await vllm({ models: ['llama'] });
    expect((await failure(deploy(other))).message).toMatch(
      /serves llama, not qwen3 \(generation L0\), whose weights L1's adapter was trained over: serve L0 there first/,
    );
  });

  it('refuses to load an adapter trained over a parent that is itself an adapter on the server', async () => {
    const server = await vllm();
    await deploy(server);
    const l2: ModelGeneration = {
      ...l1,
      name: 'L2',
      parent: 'L1',
      adapterPath: '/runs/r/train/L2/a',
      servedAs: 'mass-L2',
    };
    const error = await failure(deploy(server, l2, l1));
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toMatch(/mass-L1 \(generation L1\) is itself an adapter over qwen3/);
    expect(error.message).toMatch(/rsi\.deploy\.kind: restart/);
    expect(error.message).toMatch(/rsi\.lineage: adapters/);
  });

  it('unloads the adapter the new generation replaces once it answers, never the base, and can be called again', async () => {
    const server = await vllm();
    await deploy(server);
    const l2: ModelGeneration = {
      ...l1,
      name: 'L2',
      parent: 'L1',
      adapterBase: 'L0',
      adapterPath: '/runs/r/train/L2/checkpoints/step-000150',
      servedAs: 'mass-L2',
    };
    const before = server.requests.length;
    await expect(deploy(server, l2, base, [base, l1])).resolves.toEqual({
      servedAs: 'mass-L2',
      method: 'lora',
      alreadyServed: false,
      unloaded: ['mass-L1'],
    });
    expect(server.requests.slice(before).map((request) => `${request.method} ${request.path}`)).toEqual([
      'GET /v1/models',
      'POST /v1/load_lora_adapter',
      'GET /v1/models',
      'POST /v1/chat/completions',
      'POST /v1/unload_lora_adapter',
    ]);
    expect(server.requests.at(-1)!.body).toEqual({ lora_name: 'mass-L1' });
    expect(server.models()).toEqual([
      { id: 'qwen3', root: '/models/qwen3', parent: null },
      { id: 'mass-L2', root: l2.adapterPath, parent: 'qwen3' },
    ]);

    // A resumed run deploys again: nothing is loaded, and what is gone is not unloaded twice.
    await expect(deploy(server, l2, base, [base, l1])).resolves.toEqual({
      servedAs: 'mass-L2',
      method: 'lora',
      alreadyServed: true,
    });
    expect(server.requests.filter((request) => request.path.includes('_lora_adapter'))).toHaveLength(3);
  });

  it('refuses an adapter the server holds over another base model than the one it was trained over', async () => {
    const server = await vllm({ models: ['qwen3', 'qwen3-other'] });
    await deploy(server);
    const other = baseGeneration({ name: 'L0b', servedAs: 'qwen3-other' });
    const error = await failure(deploy(server, l1, other));
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toMatch(
      /serves mass-L1 as an adapter over qwen3, not over qwen3-other \(generation L0b\), whose weights it was trained over/,
    );
  });

  it('says how to start vLLM when the endpoint is missing (404), here on the scripted server', async () => {
    const scripted = await startScriptedServer({ models: ['qwen3'] });
    servers.push(scripted);
    const error = await failure(deploy(scripted));
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toContain(`POST ${scripted.url}/v1/load_lora_adapter answered 404`);
    expect(error.message).toContain('--enable-lora');
    expect(error.message).toContain('VLLM_ALLOW_RUNTIME_LORA_UPDATING=True');
  });

  it("passes on vLLM's reason for refusing an adapter", async () => {
    const server = await vllm({ refuseAdapters: 'LoRA rank 64 is greater than max_lora_rank 16.' });
    const error = await failure(deploy(server));
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toMatch(/answered 400: LoRA rank 64 is greater than max_lora_rank 16\./);
    expect(error.message).toContain('--max-lora-rank');
  });

  it('reports a wrong key, an unreachable server and a generation without an adapter', async () => {
    const server = await vllm({ apiKey: 'another-key' });
    expect((await failure(deploy(server))).message).toMatch(/GET .*\/v1\/models answered 401: Unauthorized/);

    const gone = await vllm();
    await gone.close();
    const unreachable = await failure(deploy(gone));
    expect(unreachable).toBeInstanceOf(SystemError);
    expect(unreachable.message).toMatch(new RegExp(`GET ${gone.url}/v1/models failed: .*ECONNREFUSED`));

    await expect(deploy(server, { ...l1, adapterPath: undefined, mergedPath: '/m' })).rejects.toThrow(
      /generation L1 has no adapter, only merged weights: deploy it with a restart command/,
    );
  });
});
