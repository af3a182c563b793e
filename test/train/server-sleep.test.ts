import { afterEach, describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { sleepRoutes, whileServerSleeps } from '../../src/train/server-sleep.js';
import { startFakeVllm, type FakeVllm } from './fake-vllm.js';

let server: FakeVllm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const routesCalled = (fake: FakeVllm) =>
  fake.requests
    .map((request) => `${request.method} ${request.path}`)
    .filter((call) => !call.includes('/v1/'));

describe("vLLM's sleep mode around training", () => {
  it('sleeps before the work, wakes after it, and the server answers chat requests again', async () => {
    server = await startFakeVllm({ models: ['qwen3'], sleepMode: true });
    const fake = server;
    const chat = () =>
      fetch(`${fake.baseUrl}/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model: 'qwen3', messages: [] }),
      }).then((reply) => reply.status);
    const duringWork = await whileServerSleeps({ baseUrl: fake.baseUrl }, chat);
    expect(duringWork).toBe(503);
    expect(await chat()).toBe(200);
    expect(routesCalled(fake)).toEqual([
      'GET /is_sleeping',
      'POST /sleep?level=1',
      'GET /is_sleeping',
      'POST /wake_up',
      'GET /is_sleeping',
    ]);
  });

  it('wakes the server when the work fails, and passes the failure on', async () => {
    server = await startFakeVllm({ models: ['qwen3'], sleepMode: true });
    const failing = whileServerSleeps({ baseUrl: server.baseUrl }, () =>
      Promise.reject(new Error('training died')),
    );
    await expect(failing).rejects.toThrow('training died');
    expect(await sleepRoutes({ baseUrl: server.baseUrl })).toEqual({ available: true, sleeping: false });
  });

  it('refuses, before any work, on a server without the routes, and says how to start one', async () => {
    server = await startFakeVllm({ models: ['qwen3'] });
    let worked = false;
    const refused = whileServerSleeps({ baseUrl: server.baseUrl }, async () => {
      worked = true;
    });
    await expect(refused).rejects.toThrow(UserError);
    await expect(refused).rejects.toThrow(
      /--enable-sleep-mode and the environment variable VLLM_SERVER_DEV_MODE=1/,
    );
    expect(worked).toBe(false);
  });
});
