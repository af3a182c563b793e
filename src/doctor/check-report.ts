import { z } from 'zod';

import { ThroughputMeasurement } from './throughput-record.js';

/** What `mass doctor` prints with `--json`, and what the checks before a run refuse to start on. */

export const VERDICTS = ['pass', 'warn', 'fail', 'skip'] as const;
export type Verdict = (typeof VERDICTS)[number];

export const CheckResult = z.object({
  /** The check's name: `served`, `context`, `tool calls`, `reasoning`, `streamed usage`, `seed`, `runtime LoRA`, `throughput`. */
  check: z.string(),
  verdict: z.enum(VERDICTS),
  /** What the server did, in a line. */
  seen: z.string(),
  /** The server flag or setting that fixes it; null when nothing needs fixing. */
  fix: z.string().nullable(),
});
export type CheckResult = z.infer<typeof CheckResult>;

export const EndpointReport = z.object({
  /** Without credentials, query or fragment. */
  baseUrl: z.string(),
  model: z.string(),
  roles: z.array(z.string()),
  checks: z.array(CheckResult),
  /** What the throughput check measured (`mass doctor` on the team's endpoints); absent when it did not run or no call finished. */
  throughput: ThroughputMeasurement.optional(),
});
export type EndpointReport = z.infer<typeof EndpointReport>;

export const DoctorReport = z.object({
  kind: z.literal('doctor-report'),
  schemaVersion: z.literal(1),
  /** `served`, or `toy`: the built-in toy model, served by mass itself for the checks. */
  model: z.enum(['served', 'toy']),
  note: z.string().nullable(),
  endpoints: z.array(EndpointReport),
  /** Hosted APIs (OpenAI's, Anthropic's): no server flags to check. */
  notProbed: z.array(z.object({ provider: z.string(), model: z.string(), roles: z.array(z.string()) })),
  failed: z.boolean(),
});
export type DoctorReport = z.infer<typeof DoctorReport>;

export const check = {
  pass: (name: string, seen: string): CheckResult => ({ check: name, verdict: 'pass', seen, fix: null }),
  skip: (name: string, seen: string): CheckResult => ({ check: name, verdict: 'skip', seen, fix: null }),
  warn: (name: string, seen: string, fix: string | null): CheckResult => ({
    check: name,
    verdict: 'warn',
    seen,
    fix,
  }),
  fail: (name: string, seen: string, fix: string): CheckResult => ({
    check: name,
    verdict: 'fail',
    seen,
    fix,
  }),
};
