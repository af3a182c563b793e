import { join } from 'node:path';

import { z } from 'zod';

import { Interval } from '../statistics/interval.js';
import { defineRecord } from '../store/record.js';
import { OfficialFigures, officialFigures } from './benchmark-official-figures.js';
import { Verification } from './benchmark-verification.js';

/**
 * Who works a benchmark's tasks: a generation's model as a team (the `agent` tool available, no design: the bare
 * instruction, the paper's condition) or alone (`single-agent`), or Harbor's two reference agents: `oracle` runs the
 * task's solution/solve.sh, `nop` does nothing. The reference agents check a dataset, not a model.
 */
export const BenchmarkAgent = z.enum(['team', 'single-agent', 'oracle', 'nop']);
export type BenchmarkAgent = z.infer<typeof BenchmarkAgent>;

export function usesModel(agent: BenchmarkAgent): boolean {
  return agent === 'team' || agent === 'single-agent';
}

/**
 * One trial: an agent's run of one task (an episode for a model, a script for oracle and nop). Version 2 adds
 * `lostToInfrastructure`; a version-1 trial is read as it is, its loss told from its status (`infrastructureLoss`).
 */
export const BenchmarkTrial = z
  .object({
    schemaVersion: z.union([z.literal(1), z.literal(2)]),
    kind: z.literal('benchmark-trial'),
    benchmark: z.string(),
    task: z.string(),
    agent: BenchmarkAgent,
    /** The generation for a model's trial; the agent's name for oracle and nop. */
    label: z.string(),
    trial: z.number().int().nonnegative(),
    /** The same for every label's trial of this number: trials are paired across generations. */
    samplingSeed: z.number().int(),
    /** The trial's folder in the run directory (an episode's, for a model). */
    dir: z.string(),
    /**
     * The network its agent, oracle and verifier had (`internetLabel`): `public` (every public host, through the
     * egress proxy), `allow:<host,…>`, `offline` (the task asks for the internet, the run gave none) or `none` (the
     * task asks for none). Absent in older records.
     */
    internet: z.string().optional(),
    /** `finished`: the agent's run ended on its own; anything else says how it ended (timeout, failed, …). */
    status: z.string(),
    failure: z.string().nullable(),
    /** Output tokens from the proxy log, every thread counted; 0 for oracle and nop. */
    outputTokens: z.number().int().nonnegative(),
    delegations: z.number().int().nonnegative(),
    wallSeconds: z.number().nonnegative(),
    /** Why the trial says nothing of the agent (its environment or harness failed before the agent worked), after
     * its retries; null when it counts. Such trials are counted apart from the official figure. */
    lostToInfrastructure: z.string().nullable().optional(),
    /** How many earlier attempts of this trial were lost to infrastructure and run again. */
    infrastructureRetries: z.number().int().nonnegative().optional(),
  })
  .strict();
export type BenchmarkTrial = z.infer<typeof BenchmarkTrial>;

/** A trial with its verification. */
export const VerifiedTrial = BenchmarkTrial.extend({ verification: Verification }).strict();
export type VerifiedTrial = z.infer<typeof VerifiedTrial>;

export const SkippedTask = z.object({ task: z.string(), reason: z.string() }).strict();
export type SkippedTask = z.infer<typeof SkippedTask>;

const Ratio = z.object({ value: z.number().nullable(), interval: Interval.nullable() }).strict();

/** One label's figures on one benchmark. */
export const BenchmarkFigures = z
  .object({
    label: z.string(),
    agent: BenchmarkAgent,
    trials: z.number().int(),
    tasks: z.number().int(),
    /** Trials whose verifier gave no reward (no-reward, bad-reward, timeout, crashed): counted as 0 in the mean. */
    unscored: z.number().int(),
    /** Mean over tasks of each task's mean reward; the interval resamples tasks (the task is the unit). */
    meanReward: z.number().nullable(),
    meanRewardInterval: Interval.nullable(),
    meanOutputTokens: z.number(),
    /** 1,000 × Σ reward / Σ output tokens over the trials; null without output tokens. */
    rewardPerThousandTokens: z.number().nullable(),
    /** This label's reward per 1,000 tokens over the reference label's, with a bootstrap interval over tasks. */
    ratioToReference: Ratio.nullable(),
    /** Share of trials in which the model delegated at least once. */
    delegationRate: z.number().nullable(),
    meanDelegations: z.number(),
  })
  .strict();
export type BenchmarkFigures = z.infer<typeof BenchmarkFigures>;

export const TaskRow = z
  .object({
    task: z.string(),
    label: z.string(),
    trials: z.number().int(),
    meanReward: z.number().nullable(),
    meanOutputTokens: z.number(),
    statuses: z.record(z.string(), z.number().int()),
  })
  .strict();
export type TaskRow = z.infer<typeof TaskRow>;

export const BenchmarkSummary = z
  .object({
    benchmark: z.string(),
    /** The dataset folders the tasks came from. */
    sources: z.array(z.string()),
    agent: BenchmarkAgent,
    trialsPerTask: z.number().int(),
    /** The label every ratio is taken to (the first generation), null for the reference agents. */
    reference: z.string().nullable(),
    /** Whose numbers these are when a stand-in played the model (the toy): null for a real model. */
    standIn: z.string().nullable(),
    tasks: z.array(z.string()),
    skipped: z.array(SkippedTask),
    figures: z.array(BenchmarkFigures),
    /** The official statistic, beside ours: mean ± sample SD over runs, on the tasks every label has results for. */
    official: OfficialFigures,
    perTask: z.array(TaskRow),
    trials: z.array(VerifiedTrial),
    bootstrap: z.object({ seed: z.number().int(), resamples: z.number().int() }).strict(),
  })
  .strict();
export type BenchmarkSummary = z.infer<typeof BenchmarkSummary>;

/** Version 2 adds `official`; a version-1 summary gets it computed from its trials when read. */
export const BenchmarkSummaryRecord = defineRecord({
  kind: 'benchmark-summary',
  version: 2,
  schema: BenchmarkSummary,
  migrate: (body) => ({
    ...body,
    official: officialFigures(z.array(VerifiedTrial).parse(body['trials'] ?? [])),
  }),
});

export const BENCHMARKS_FOLDER = 'benchmarks';

/** Where a benchmark's records are in the run directory: `benchmarks/<benchmark>/…`. */
export function benchmarkPath(benchmark: string, ...rest: string[]): string {
  return join(BENCHMARKS_FOLDER, benchmark, ...rest);
}
