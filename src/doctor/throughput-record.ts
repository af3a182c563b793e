import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';

import { z } from 'zod';

import { UserError, errorMessage } from '../errors.js';
import { describeIssues } from '../store/describe-issues.js';
import { writeFileAtomic } from '../store/atomic-write.js';
import { systemErrorCode } from '../store/system-error-code.js';
import type { DoctorReport } from './check-report.js';

/** The record's name in the run directory, where `mass doctor` writes it by default and `mass plan` looks for it. */
export const THROUGHPUT_RECORD_FILE = 'doctor-throughput.json';

/** What the throughput check measured on one endpoint, with the run's calls at once. */
export const ThroughputMeasurement = z.object({
  /** Calls sent at once: the endpoint's `maxConcurrency`. */
  concurrency: z.number().int().positive(),
  /** Of those, the calls that finished within the probe's bound. */
  finishedCalls: z.number().int().nonnegative(),
  seconds: z.number().nonnegative(),
  callsPerSecond: z.number().nonnegative(),
  outputTokensPerSecond: z.number().nonnegative(),
  /** Output tokens per second of one call alone. */
  singleCallOutputTokensPerSecond: z.number().nonnegative(),
});
export type ThroughputMeasurement = z.infer<typeof ThroughputMeasurement>;

/**
 * `doctor-throughput.json`: per endpoint the team runs on, what `mass doctor` measured and when. Addresses are shown
 * without credentials, and no key is ever in it (the report it is made from holds none).
 */
export const ThroughputRecord = z.object({
  kind: z.literal('doctor-throughput'),
  schemaVersion: z.literal(1),
  measuredAt: z.string(),
  /** The configuration's `name`. */
  run: z.string(),
  /** `served`, or `toy`: the built-in toy model, served by mass itself for the checks. */
  model: z.enum(['served', 'toy']),
  endpoints: z.array(
    z.object({
      baseUrl: z.string(),
      model: z.string(),
      roles: z.array(z.string()),
      throughput: ThroughputMeasurement,
    }),
  ),
});
export type ThroughputRecord = z.infer<typeof ThroughputRecord>;

/** The record's default place: the run's directory, `<runs>/<name>/doctor-throughput.json`. */
export function throughputRecordPath(runsDirectory: string, runName: string): string {
  return resolve(runsDirectory, runName, THROUGHPUT_RECORD_FILE);
}

/** The record of a doctor report's measured endpoints; null when none was measured (no team endpoint probed). */
export function throughputRecord(
  report: DoctorReport,
  runName: string,
  measuredAt: Date,
): ThroughputRecord | null {
  const endpoints = report.endpoints.flatMap(({ baseUrl, model, roles, throughput }) =>
    throughput ? [{ baseUrl, model, roles, throughput }] : [],
  );
  if (endpoints.length === 0) return null;
  return {
    kind: 'doctor-throughput',
    schemaVersion: 1,
    measuredAt: measuredAt.toISOString(),
    run: runName,
    model: report.model,
    endpoints,
  };
}

export async function writeThroughputRecord(path: string, record: ThroughputRecord): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(record, null, 2)}\n`);
}

/** The record at `path`; null when there is none. A file that is not one is an error naming it. */
export async function readThroughputRecord(path: string): Promise<ThroughputRecord | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (systemErrorCode(error) === 'ENOENT') return null;
    throw new UserError(`${path} could not be read: ${errorMessage(error)}.`, { cause: error });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw damaged(path, errorMessage(error));
  }
  const parsed = ThroughputRecord.safeParse(value);
  if (!parsed.success) throw damaged(path, describeIssues(parsed.error));
  return parsed.data;
}

function damaged(path: string, why: string): UserError {
  return new UserError(
    `${path} is not a throughput record of mass doctor (${why}): run \`mass doctor --config <file>\` again to ` +
      'measure anew, or remove the file.',
  );
}

/** Where a record written in a run directory is, for messages: `runs/<name>/doctor-throughput.json`. */
export function recordInRun(runDirectory: string): string {
  return join(runDirectory, THROUGHPUT_RECORD_FILE);
}
