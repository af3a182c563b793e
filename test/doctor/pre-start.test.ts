import { afterEach, describe, expect, it } from 'vitest';

import { doctorPlan } from '../../src/doctor/doctor-plan.js';
import { describeDoctorReport } from '../../src/doctor/doctor-table.js';
import { checkServersBeforeRun } from '../../src/doctor/pre-start.js';
import { doctorReport, runDoctor } from '../../src/doctor/run-doctor.js';
import { UserError } from '../../src/errors.js';
import {
  MISCONFIGURED,
  startScriptedServer,
  type ScriptedServer,
} from '../../src/testing/scripted-server.js';
import { startToyModel } from '../../src/toy/toy-model.js';
import { BASE_TOY_WEIGHTS } from '../../src/toy/weights.js';
import { servedConfig } from './support.js';

const MODEL = 'Qwen/Qwen3-8B';
const SEARCH = {
  command: 'mass search',
  listing: 'required',
  runtimeLora: false,
  evaluation: false,
} as const;

describe('the checks before a run', () => {
  const closing: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((server) => server.close()));
  });
  const serve = async (options: Parameters<typeof startScriptedServer>[0]): Promise<ScriptedServer> => {
    const server = await startScriptedServer(options);
    closing.push(server);
    return server;
  };

  it('pass on the default scripted server, leaving its script and its requests to the run', async () => {
    const server = await serve({ models: [MODEL], script: [] });
    const lines: string[] = [];
    await checkServersBeforeRun(servedConfig(server.baseUrl, MODEL), {
      ...SEARCH,
      log: (line) => lines.push(line),
    });
    expect(lines).toEqual([
      expect.stringMatching(/^mass search: model server checks passed for 1 endpoint\(s\) in/),
    ]);
    // Only the model listing among the run's requests; the probes apart, no scripted step used.
    expect(server.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['GET /v1/models']);
    expect(server.probes.map((request) => request.stream)).toEqual([false, true]);
    expect(() => server.assertDone()).not.toThrow();
  });

  it('stop the run on a server without a tool parser, with the fix; and a deploying run on one without LoRA routes', async () => {
    const server = await serve({ models: [MODEL], flags: MISCONFIGURED['no-tool-parser'] });
    const config = servedConfig(server.baseUrl, MODEL);
    const refused = await checkServersBeforeRun(config, { ...SEARCH, log: () => {} }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(UserError);
    expect((refused as Error).message).toMatch(
      /^mass search: the model server is not set up for a run; nothing was started:\n.*Qwen\/Qwen3-8B at http:\/\/127\.0\.0\.1:\d+\/v1 \(executor, judge, optimizer\)\n.*tool calls +fail +the call came back as text[^\n]*\n +fix: start vLLM with --enable-auto-tool-choice --tool-call-parser hermes\n.*--skip-doctor/s,
    );

    const plain = await serve({ models: [MODEL] });
    const rsi = { command: 'mass rsi', listing: 'any-served', runtimeLora: true, evaluation: false } as const;
    await expect(
      checkServersBeforeRun(servedConfig(plain.baseUrl, MODEL), { ...rsi, log: () => {} }),
    ).rejects.toThrow(/runtime LoRA +fail .*VLLM_ALLOW_RUNTIME_LORA_UPDATING=True/s);
  });

  it('check nothing for the toy model, which mass serves itself', async () => {
    const lines: string[] = [];
    const config = servedConfig('http://127.0.0.1:9/v1', 'mass-toy', {
      model: { kind: 'toy' },
      roles: { executor: { model: 'mass-toy' } },
    });
    await checkServersBeforeRun(config, { ...SEARCH, log: (line) => lines.push(line) });
    expect(lines).toEqual([]);
  });
});

describe('doctor on the toy model and with a key', () => {
  it('the toy model served as a model server passes every check but runtime LoRA, which it does not have', async () => {
    const toy = await startToyModel({ weights: BASE_TOY_WEIGHTS, modelName: 'mass-toy' });
    try {
      const config = servedConfig(toy.baseUrl, 'mass-toy');
      const [report] = await runDoctor({
        config,
        plan: doctorPlan(config),
        depth: 'full',
        listing: 'required',
        runtimeLora: true,
      });
      expect(
        report!.checks.filter((result) => result.verdict !== 'pass').map((result) => result.check),
      ).toEqual(['runtime LoRA']);
    } finally {
      await toy.close();
    }
  });

  it('never shows the API key, nor credentials in a base URL', async () => {
    const secret = `sk-doctor-${process.pid}-secret`;
    process.env.MASS_DOCTOR_TEST_KEY = secret;
    const server = await startScriptedServer({
      models: [MODEL],
      flags: MISCONFIGURED['no-reasoning-parser'],
    });
    try {
      const withKey = servedConfig(server.baseUrl, MODEL, {
        roles: { executor: { model: MODEL, baseUrl: server.baseUrl, apiKeyEnv: 'MASS_DOCTOR_TEST_KEY' } },
      });
      const credentials = new URL(server.baseUrl);
      credentials.username = 'user';
      credentials.password = 'hunter2';
      const withCredentials = servedConfig(credentials.toString(), MODEL);
      const printed: string[] = [];
      for (const config of [withKey, withCredentials]) {
        const plan = doctorPlan(config);
        const endpoints = await runDoctor({
          config,
          plan,
          depth: 'full',
          listing: 'required',
          runtimeLora: true,
        });
        const report = doctorReport({ kind: 'served', note: null, endpoints, plan });
        expect(report.failed).toBe(true);
        expect(report.endpoints[0]!.baseUrl).toBe(`http://127.0.0.1:${credentials.port}/v1`);
        printed.push(JSON.stringify(report), describeDoctorReport(report));
      }
      // The key reached the server, and nothing printed holds it, nor the password of a base URL.
      expect(server.probes[0]!.headers.authorization).toBe(`Bearer ${secret}`);
      expect(printed.join('\n')).not.toContain(secret);
      expect(printed.join('\n')).not.toContain('hunter2');
    } finally {
      delete process.env.MASS_DOCTOR_TEST_KEY;
      await server.close();
    }
  });
});
