import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { DoctorReport } from '../../src/doctor/check-report.js';
import {
  MISCONFIGURED,
  startScriptedServer,
  WELL_CONFIGURED,
  type ScriptedServer,
} from '../../src/testing/scripted-server.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';

const MODEL = 'Qwen/Qwen3-8B';

describe('mass doctor, and the same checks before mass search', () => {
  const directory = temporaryDirectory();
  const runs = join(directory.path, 'runs');
  let sound: ScriptedServer;
  let noToolParser: ScriptedServer;
  const configFor = (name: string, server: ScriptedServer | null) => {
    const file = join(directory.path, `${name}.yaml`);
    writeFileSync(
      file,
      [
        `name: ${name}`,
        `suite: ${DEMO_SUITE}`,
        'tasks: [demo-volatility]',
        ...(server
          ? [`roles: { executor: { model: "${MODEL}", baseUrl: "${server.baseUrl}", maxConcurrency: 4 } }`]
          : ['model: { kind: toy }', 'roles: { executor: { model: mass-toy } }']),
        'search: { iterations: 0 }',
        '',
      ].join('\n'),
    );
    return file;
  };

  beforeAll(async () => {
    [sound, noToolParser] = await Promise.all([
      startScriptedServer({ models: [MODEL], flags: WELL_CONFIGURED }),
      startScriptedServer({
        models: [MODEL],
        flags: { ...WELL_CONFIGURED, ...MISCONFIGURED['no-tool-parser'] },
      }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([sound?.close(), noToolParser?.close()]);
    directory.remove();
  });

  it('passes a correctly started server (--json), and fails one without a tool parser naming the flag', async () => {
    const passed = await runMass(['doctor', '--config', configFor('sound', sound), '--json', '--runs', runs]);
    expect(passed.code, passed.stderr).toBe(0);
    const report = DoctorReport.parse(JSON.parse(passed.stdout));
    // The throughput it measured is recorded in the run directory, for mass plan; the JSON stays alone on stdout.
    expect(passed.stderr).toContain(
      `Throughput recorded in ${join(runs, 'sound', 'doctor-throughput.json')}`,
    );
    expect(existsSync(join(runs, 'sound', 'doctor-throughput.json'))).toBe(true);
    expect(report.failed).toBe(false);
    expect(report.endpoints[0]!.checks.map((result) => result.verdict)).not.toContain('fail');

    const failed = await runMass(['doctor', '--config', configFor('broken', noToolParser), '--runs', runs]);
    expect(failed.code).toBe(2);
    expect(failed.stdout).toMatch(/tool calls +fail +the call came back as text in the content/);
    expect(failed.stdout).toContain(
      'fix: start vLLM with --enable-auto-tool-choice --tool-call-parser hermes',
    );
    expect(failed.stdout).toMatch(/1 failed, 0 warning\(s\), 7 passed/);
  }, 60_000);

  it('mass search refuses to start against the misconfigured server, before any episode', async () => {
    const file = configFor('refused', noToolParser);
    const before = noToolParser.requests.length;
    const refused = await runMass(['search', '--config', file, '--runs', runs]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /mass search: the model server is not set up for a run; nothing was started/,
    );
    expect(refused.stderr).toContain(
      'fix: start vLLM with --enable-auto-tool-choice --tool-call-parser hermes',
    );
    expect(existsSync(join(runs, 'refused'))).toBe(false);
    // The model listing alone: no chat request of the run's reached the server.
    expect(noToolParser.requests.slice(before).map((request) => `${request.method} ${request.path}`)).toEqual(
      ['GET /v1/models'],
    );
  }, 60_000);

  it('passes the built-in toy model, saying it is the toy', async () => {
    const result = await runMass(['doctor', '--config', configFor('toy', null), '--runs', runs]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^model\.kind toy: the built-in toy model/);
    expect(result.stdout).toMatch(/0 failed, 0 warning\(s\), 7 passed/);
  }, 60_000);
});
