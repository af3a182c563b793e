// mass doctor records the throughput it measured, and mass plan takes its wall time from that record: both commands
// run in-process against a scripted vLLM. The record holds each team endpoint's figures (no key), the plan says its
// time rests on it and when it was measured, and its seconds are those of the same figure given as --throughput.
// A record of another model, a damaged record and no record at all each say what the plan rests on instead.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { doctorAction } from '../../src/cli/commands/doctor.js';
import { planAction } from '../../src/cli/commands/plan.js';
import { loadRunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { ThroughputRecord } from '../../src/doctor/throughput-record.js';
import { chooseThroughput } from '../../src/plan/doctor-throughput.js';
import { planRun } from '../../src/plan/run-plan.js';
import {
  startScriptedServer,
  WELL_CONFIGURED,
  type ScriptedServer,
} from '../../src/testing/scripted-server.js';
import { scratch, removeScratchDirectories } from '../judge/support.js';

const MODEL = 'Qwen/Qwen3-8B';
const SECRET = 'sk-doctor-record-secret-7f3a';
let server: ScriptedServer;
let directory: string;
let configFile: string;
let runs: string;
const recordFile = () => join(runs, 'throughput-run', 'doctor-throughput.json');

beforeAll(async () => {
  server = await startScriptedServer({ models: [MODEL], flags: WELL_CONFIGURED });
  directory = await scratch('doctor-record-');
  runs = join(directory, 'runs');
  configFile = join(directory, 'run.yaml');
  process.env.MASS_TEST_DOCTOR_KEY = SECRET;
  await writeFile(
    configFile,
    [
      'name: throughput-run',
      `suite: ${DEMO_SUITE}`,
      'tasks: [demo-volatility]',
      `roles: { executor: { model: "${MODEL}", baseUrl: "${server.baseUrl}", maxConcurrency: 4, apiKeyEnv: MASS_TEST_DOCTOR_KEY } }`,
      'concurrency: { episodes: 4 }',
      'search: { iterations: 0 }',
      '',
    ].join('\n'),
  );
});
afterAll(async () => {
  delete process.env.MASS_TEST_DOCTOR_KEY;
  await server?.close();
  await removeScratchDirectories();
});

/** What a command printed with console.log and on stdout. */
async function printed(action: () => Promise<void>): Promise<string> {
  const lines: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
    lines.push(args.join(' '));
  });
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    await action();
  } finally {
    log.mockRestore();
    write.mockRestore();
  }
  return lines.join('\n');
}

const plan = (extra: Record<string, string> = {}) =>
  printed(() => planAction({ config: configFile, rounds: '1', runs, ...extra }));

describe('mass doctor’s throughput record, read by mass plan', () => {
  it('no record yet: the plan says its time rests on an assumed throughput, and where to get a measured one', async () => {
    expect(await plan()).toContain(
      'assumed throughput: 500 output tokens/s at 4 calls at once (no mass doctor record: run mass doctor, or give --throughput)',
    );
  });

  it('mass doctor writes the record in the run directory; mass plan says its time rests on it and when it was measured', async () => {
    const before = Date.now();
    const report = await printed(() => doctorAction({ config: configFile, timeout: '60', runs }));
    expect(report).toContain(`Throughput recorded in ${recordFile()}`);
    const text = readFileSync(recordFile(), 'utf8');
    expect(text).not.toContain(SECRET);
    const record = ThroughputRecord.parse(JSON.parse(text));
    expect(record).toMatchObject({ run: 'throughput-run', model: 'served' });
    expect(Date.parse(record.measuredAt)).toBeGreaterThanOrEqual(before);
    const [endpoint] = record.endpoints;
    expect(record.endpoints).toHaveLength(1);
    expect(endpoint).toMatchObject({
      baseUrl: server.baseUrl,
      model: MODEL,
      roles: ['executor', 'judge', 'optimizer'],
    });
    expect(endpoint!.throughput).toMatchObject({ concurrency: 4, finishedCalls: 4 });
    // The figures are the check's own line's: the report says the same rate with the calls at once.
    const rate = endpoint!.throughput.outputTokensPerSecond;
    expect(rate).toBeGreaterThan(0);
    expect(report).toMatch(new RegExp(`with 1 call, ${rate.toFixed(0)} with 4 at once`));
    // 4 calls over the measured seconds, each figure rounded to 3 decimals: against the scripted server the seconds
    // are hundredths, so the rate is checked within what rounding the seconds leaves it, not as a product near 4.
    const { callsPerSecond, seconds } = endpoint!.throughput;
    expect(callsPerSecond).toBeGreaterThanOrEqual(4 / (seconds + 0.0005) - 0.0005);
    expect(callsPerSecond).toBeLessThanOrEqual(4 / Math.max(seconds - 0.0005, 1e-9) + 0.0005);

    const planned = await plan();
    expect(planned).toContain(
      `doctor throughput: ${Math.round(rate)} output tokens/s at 4 calls at once, measured ${record.measuredAt}`,
    );
    expect(planned).toContain('doctor-throughput.json');
    // The same figure given on the command line plans the same time; --throughput wins over the record.
    const config = await loadRunConfig(configFile);
    const options = { config, suiteDir: DEMO_SUITE, rounds: 1, scope: 'loop' as const };
    const fromRecord = await chooseThroughput({ config, given: null, recordPath: recordFile() });
    const fromFlag = await chooseThroughput({ config, given: rate, recordPath: recordFile() });
    expect(fromRecord.throughput?.source).toEqual({
      kind: 'doctor-record',
      path: recordFile(),
      measuredAt: record.measuredAt,
    });
    expect(fromFlag.throughput?.source).toEqual({ kind: 'flag' });
    const [a, b] = await Promise.all([
      planRun({ ...options, throughput: fromRecord.throughput }),
      planRun({ ...options, throughput: fromFlag.throughput }),
    ]);
    expect(a.time.seconds).toBeCloseTo(b.time.seconds, 6);
    expect(a.throughput?.outputTokensPerSecond).toBe(rate);
    expect(JSON.parse(await plan({ json: 'true' })).throughput.source.kind).toBe('doctor-record');
  }, 60_000);

  it('a record of another model is not used, and the plan says so; a damaged one is an error naming the file', async () => {
    const other = join(directory, 'other.json');
    const record = ThroughputRecord.parse(JSON.parse(readFileSync(recordFile(), 'utf8')));
    await writeFile(
      other,
      JSON.stringify({
        ...record,
        endpoints: record.endpoints.map((entry) => ({ ...entry, model: 'other/model' })),
      }),
    );
    expect(await plan({ doctorRecord: other })).toMatch(
      /other\.json measured other\/model, not the executor's Qwen\/Qwen3-8B/,
    );
    const damaged = join(directory, 'damaged', 'doctor-throughput.json');
    await mkdir(join(directory, 'damaged'), { recursive: true });
    await writeFile(damaged, '{"kind": "doctor-throughput"');
    await expect(plan({ doctorRecord: damaged })).rejects.toThrow(
      new RegExp(`${damaged.replace(/[.]/g, '\\.')} is not a throughput record of mass doctor`),
    );
    await expect(plan({ doctorRecord: join(directory, 'missing.json') })).rejects.toThrow(
      /there is no such file/,
    );
    expect(existsSync(recordFile())).toBe(true);
  });
});
