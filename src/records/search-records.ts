import { z } from 'zod';

import { JudgeOrders } from '../config/judge-orders.js';
import { PairwiseComparison } from './optimizer-history.js';
import { ExecutionMetadata } from './execution-metadata.js';
import { defineRecord } from '../store/record.js';
import { TeamDesign, Workflow } from '../workflow/workflow.js';

/**
 * What each step of a task's search stores (in mass.db, as the step's output) and what the search writes to
 * `search/<generation>/<task>/`. A resumed search rebuilds its state from these outputs alone.
 */

/** One episode of the search: the bare reference run or a version's run. */
export const SearchEpisode = z.object({
  episodeId: z.string(),
  /** Relative to the run directory. */
  dir: z.string(),
  status: z.enum(['success', 'failure']),
  /** Why it failed: the failure kind and detail. */
  reason: z.string().nullable(),
  execution: ExecutionMetadata,
});
export type SearchEpisode = z.infer<typeof SearchEpisode>;

/** The optimizer's step: a new design, or why there is none this iteration. */
export const SearchProposal = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), design: Workflow, changeFraction: z.number(), basedOn: z.string() }),
  z.object({ ok: z.literal(false), reason: z.string(), errors: z.array(z.string()), basedOn: z.string() }),
]);
export type SearchProposal = z.infer<typeof SearchProposal>;

export const ChampionMatch = z.object({
  first: z.string(),
  second: z.string(),
  purpose: z.enum(['candidate-vs-champion', 'candidate-vs-reference', 'arbitration']),
  result: z.enum(['first', 'second', 'tie', 'failed', 'walkover']),
  rationale: z.string().nullable(),
  /** The judgment record, relative to the run directory; null for a walkover. */
  judgment: z.string().nullable(),
});
export type ChampionMatch = z.infer<typeof ChampionMatch>;

/** The judge step of one version: its matches, the champion after them, and the comparisons for the optimizer. */
export const SearchDecision = z.object({
  version: z.string(),
  championBefore: z.string(),
  championAfter: z.string(),
  promoted: z.boolean(),
  matches: z.array(ChampionMatch),
  comparisons: z.array(PairwiseComparison),
});
export type SearchDecision = z.infer<typeof SearchDecision>;

export const SearchIteration = z.object({
  version: z.string(),
  /** v0 is the task's own design; later versions come from the optimizer, or are missing when it failed. */
  proposal: SearchProposal.nullable(),
  episode: SearchEpisode.nullable(),
  decision: SearchDecision.nullable(),
  /** The stabiliser's bound on the share of the design changed in this iteration, when one was set. */
  maxChangeFraction: z.number().nullable(),
});
export type SearchIteration = z.infer<typeof SearchIteration>;

/** `search/<generation>/<task>/result.json`: the outcome of one task's search. */
export const TaskSearchRecord = defineRecord({
  kind: 'task-search',
  version: 1,
  schema: z.object({
    generation: z.string(),
    task: z.string(),
    championRule: z.enum(['paper', 'official']),
    judgeMode: JudgeOrders,
    reference: SearchEpisode,
    /** `reference` when no version ever won. */
    champion: z.string(),
    /** v0's design may be free text or a draft (the task's own); every later one is a complete workflow. */
    championDesign: TeamDesign.nullable(),
    championEpisode: z.string().nullable(),
    /** Whether some version beat the bare-task reference run; a task that never did supplies no training data. */
    beatsReference: z.boolean(),
    /** The champion after each version, oldest first. */
    championHistory: z.array(z.object({ version: z.string(), champion: z.string() })),
    iterations: z.array(SearchIteration),
    counts: z.object({
      episodes: z.number().int(),
      failedEpisodes: z.number().int(),
      judgments: z.number().int(),
      failedJudgments: z.number().int(),
      failedProposals: z.number().int(),
    }),
  }),
});
export type TaskSearchResult = z.infer<(typeof TaskSearchRecord)['schema']>;

/** The bare-task run every version is measured against. */
export const REFERENCE = 'reference';
