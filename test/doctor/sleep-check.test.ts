import { afterEach, describe, expect, it } from 'vitest';

import { checkSleepRoutes } from '../../src/doctor/sleep-check.js';
import { startFakeVllm, type FakeVllm } from '../train/fake-vllm.js';

let server: FakeVllm | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function sleepCheck(sleepMode: boolean) {
  server = await startFakeVllm({ models: ['qwen3'], sleepMode });
  return checkSleepRoutes({ baseUrl: server.baseUrl, timeoutMs: 5_000 });
}

describe("mass doctor's sleep-mode check (rsi.sleepDuringTraining)", () => {
  it('passes a server with the routes, and puts nothing to sleep', async () => {
    const result = await sleepCheck(true);
    expect(result.verdict).toBe('pass');
    expect(server!.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'GET /is_sleeping',
    ]);
  });

  it('fails a server without them, naming the flags that add them', async () => {
    const result = await sleepCheck(false);
    expect(result.verdict).toBe('fail');
    expect(JSON.stringify(result)).toContain(
      '--enable-sleep-mode and the environment variable VLLM_SERVER_DEV_MODE=1',
    );
  });
});
