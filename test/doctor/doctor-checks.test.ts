import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { CheckResult, EndpointReport } from '../../src/doctor/check-report.js';
import { doctorPlan } from '../../src/doctor/doctor-plan.js';
import { runDoctor } from '../../src/doctor/run-doctor.js';
import {
  MISCONFIGURED,
  startScriptedServer,
  WELL_CONFIGURED,
  type ScriptedServer,
} from '../../src/testing/scripted-server.js';
import type { ServerFlags } from '../../src/toy/server-flags.js';
import { servedConfig } from './support.js';

const MODEL = 'Qwen/Qwen3-8B';

/** Every check of `mass doctor` against a scripted vLLM started with the given flags. */
async function doctorAgainst(flags: ServerFlags, options: { maxModelLength?: number } = {}) {
  const server = await startScriptedServer({
    models: [MODEL],
    maxModelLength: options.maxModelLength ?? 40_960,
    flags,
    // Every probe must be a request vLLM accepts.
    strict: 'openai-compatible',
  });
  try {
    const config = servedConfig(server.baseUrl, MODEL);
    const [report] = await runDoctor({
      config,
      plan: doctorPlan(config),
      depth: 'full',
      listing: 'required',
      runtimeLora: true,
    });
    return { report: report!, server };
  } finally {
    await server.close();
  }
}

const byCheck = (report: EndpointReport) =>
  Object.fromEntries(report.checks.map((result) => [result.check, result])) as Record<string, CheckResult>;

describe('mass doctor against a scripted vLLM', () => {
  it('passes every check on a correctly started server, each probe a valid vLLM request', async () => {
    const { report, server } = await doctorAgainst(WELL_CONFIGURED);
    expect(report.roles).toEqual(['executor', 'judge', 'optimizer']);
    expect(report.checks.map((result) => [result.check, result.verdict])).toEqual([
      ['served', 'pass'],
      ['context', 'pass'],
      ['tool calls', 'pass'],
      ['reasoning', 'pass'],
      ['streamed usage', 'pass'],
      ['seed', 'pass'],
      ['runtime LoRA', 'pass'],
      ['throughput', 'pass'],
    ]);
    expect(server.rejected).toEqual([]);
    // The probes are kept apart from a run's requests.
    expect(server.requests.filter((request) => request.path === '/v1/chat/completions')).toEqual([]);
    // tool call, streamed reply, two seeded samples, 1 + 8 throughput calls
    expect(server.probes).toHaveLength(13);
    expect(byCheck(report).throughput!.seen).toMatch(
      /output tokens\/s with 1 call, \d+ with 8 at once: about [\d.]+ episodes an hour at an assumed 100,000 output tokens per episode/,
    );
  });

  const cases: Array<[keyof typeof MISCONFIGURED, string, 'fail' | 'warn', RegExp, RegExp]> = [
    [
      'no-tool-parser',
      'tool calls',
      'fail',
      /came back as text in the content.*<tool_call>/,
      /--enable-auto-tool-choice --tool-call-parser hermes/,
    ],
    [
      'no-auto-tool-choice',
      'tool calls',
      'fail',
      /answered 400: "auto" tool choice requires/,
      /--enable-auto-tool-choice --tool-call-parser hermes/,
    ],
    [
      'no-reasoning-parser',
      'reasoning',
      'fail',
      /thinking arrives inside the content: "<think>/,
      /--reasoning-parser qwen3/,
    ],
    [
      'no-stream-usage',
      'streamed usage',
      'fail',
      /ended without a usage chunk/,
      /honours stream_options.*--enable-force-include-usage/,
    ],
    ['seed-ignored', 'seed', 'warn', /gave different answers/, /--seed/],
    [
      'no-lora-routes',
      'runtime LoRA',
      'fail',
      /answered 404 .*no runtime LoRA routes/,
      /--enable-lora --max-lora-rank 64 .*VLLM_ALLOW_RUNTIME_LORA_UPDATING=True/,
    ],
    [
      'lora-not-enabled',
      'runtime LoRA',
      'fail',
      /load_lora_adapter answered 400: LoRA is not enabled/,
      /--enable-lora/,
    ],
  ];
  it.each(cases)(
    '%s: the %s check says so and names the fix; the others pass',
    async (mode, name, verdict, seen, fix) => {
      const { report } = await doctorAgainst({ ...WELL_CONFIGURED, ...MISCONFIGURED[mode] });
      const results = byCheck(report);
      expect(results[name]).toMatchObject({ verdict });
      expect(results[name]!.seen).toMatch(seen);
      expect(results[name]!.fix).toMatch(fix);
      for (const other of report.checks.filter((result) => result.check !== name)) {
        expect(other.verdict, `${other.check}: ${other.seen}`).toBe('pass');
      }
    },
  );

  it('fails a context too short for the budgets, and a model the server does not list, naming the flags', async () => {
    const { report } = await doctorAgainst(WELL_CONFIGURED, { maxModelLength: 16_384 });
    expect(byCheck(report).context).toMatchObject({
      verdict: 'fail',
      seen: expect.stringMatching(/max_model_len 16384, but .* need 24576/),
      fix: expect.stringMatching(/--max-model-len 24576/),
    });

    const server = await startScriptedServer({ models: ['another-model'] });
    try {
      const config = servedConfig(server.baseUrl, MODEL);
      const [missing] = await runDoctor({
        config,
        plan: doctorPlan(config),
        depth: 'full',
        listing: 'required',
        runtimeLora: true,
      });
      expect(missing!.checks).toEqual([
        {
          check: 'served',
          verdict: 'fail',
          seen: `GET /v1/models lists another-model, not ${MODEL}`,
          fix: expect.stringContaining(`--served-model-name ${MODEL}`),
        },
      ]);
    } finally {
      await server.close();
    }
  });
});

describe('what doctor checks where', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer({ models: ['judge-model', MODEL], flags: WELL_CONFIGURED });
  });
  afterAll(() => server.close());

  it('checks each server and model once, naming its roles; tool calls only where the team runs, reasoning only where a role thinks', async () => {
    const config = servedConfig(server.baseUrl, MODEL, {
      roles: {
        executor: { model: MODEL, baseUrl: server.baseUrl },
        judge: { model: 'judge-model', baseUrl: server.baseUrl, sampling: { enableThinking: false } },
        optimizer: { model: 'gpt-5', provider: 'openai', apiKeyEnv: 'NOT_READ' },
      },
      rsi: { deploy: { kind: 'restart', argv: ['true'] } },
    });
    const plan = doctorPlan(config);
    expect(plan.notProbed).toEqual([{ provider: 'openai', model: 'gpt-5', roles: ['optimizer'] }]);
    const [executor, judge] = await runDoctor({
      config,
      plan,
      depth: 'pre-start',
      listing: 'required',
      runtimeLora: true,
    });
    // No LoRA routes are needed with a restart deployment; no seed or throughput before a run.
    expect(executor!.checks.map((result) => result.check)).toEqual([
      'served',
      'context',
      'tool calls',
      'reasoning',
      'streamed usage',
    ]);
    expect(judge!.roles).toEqual(['judge']);
    expect(judge!.checks.map((result) => [result.check, result.verdict])).toEqual([
      ['served', 'pass'],
      ['context', 'pass'],
      ['reasoning', 'skip'],
      ['streamed usage', 'pass'],
    ]);
  });
});
