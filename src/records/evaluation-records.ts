import { SpendingSummary } from '../cost/spending-summary.js';
import { z } from 'zod';

import { JudgeUsage } from './judgment-record.js';
import { defineRecord } from '../store/record.js';
import { SearchCoverageFigure } from './search-coverage-figure.js';
import { computeEvaluationFigures, type FigureOptions } from './evaluation-statistics/figures.js';
import { EvaluationFigures, type GradingCoverage } from './evaluation-figures.js';
import { AgreementSample, GradedRollout, JudgedPair, SelectedRun } from './evaluation-statistics/inputs.js';

/**
 * What `mass eval` writes under `evaluation/<name>/`: one step output per episode (in mass.db), one row per grade
 * (`grades.jsonl`) and per judgment of one order (`judgments.jsonl`), both append-only, and `summary.json`.
 */

/** The configurable conditions, and `transfer`: the episodes of a workflow transfer (`evaluation.transfer`). */
export const EvaluationCondition = z.enum(['bare', 'workflow', 'single-agent', 'transfer']);
export type EvaluationCondition = z.infer<typeof EvaluationCondition>;

/** One evaluation episode as its step stored it: where it is and what its record says. */
export const EvaluationEpisode = z.object({
  episodeId: z.string(),
  /** Relative to the run directory. */
  dir: z.string(),
  /** The model's name; for a transfer side, its label (`L0-with-L1-designs`). */
  model: z.string(),
  task: z.string(),
  condition: EvaluationCondition,
  replicate: z.number().int().nonnegative(),
  /** The same for replicate i of every model: pairs differ by the model alone. */
  samplingSeed: z.number().int(),
  /** The task's data seed: the grader regenerates the planted truth from it. */
  dataSeed: z.number().int(),
  status: z.enum(['success', 'failure']),
  failure: z.string().nullable(),
  outputTokens: z.number().int().nonnegative(),
  delegations: z.number().int().nonnegative(),
  subagentThreads: z.number().int().nonnegative(),
  tampered: z.boolean(),
  /** The hash of the design the episode ran (`episode.json`'s); null for the bare task; absent in older records. */
  workflowHash: z.string().nullable().optional(),
});
export type EvaluationEpisode = z.infer<typeof EvaluationEpisode>;

/** A row of `grades.jsonl`: the task's withheld grader on one episode (an evaluation one or a loop one). */
export const GradeRow = z.object({
  schemaVersion: z.literal(1),
  kind: z.literal('evaluation-grade'),
  /** The step that wrote it; a key appears twice only when an interrupted attempt was redone, the last row counts. */
  key: z.string(),
  episodeId: z.string(),
  dir: z.string(),
  task: z.string(),
  dataSeed: z.number().int(),
  /** 0 to 100; null when the grader failed on this workspace. */
  grade: z.number().nullable(),
  parts: z.array(z.object({ name: z.string(), score: z.number(), weight: z.number() })),
  error: z.string().nullable(),
});
export type GradeRow = z.infer<typeof GradeRow>;

/** A row of `judgments.jsonl`: one judge, one seed, one A/B order, on one pair of episodes. */
export const JudgmentRow = z.object({
  schemaVersion: z.literal(1),
  kind: z.literal('evaluation-judgment'),
  key: z.string(),
  /** `evaluation`: a pair of evaluation episodes; `tournament`: a sampled match of the loop's own tournament. */
  sample: z.string(),
  task: z.string(),
  condition: z.string(),
  replicate: z.number().int().nonnegative(),
  /** The first episode's side (the candidate generation; the tournament match's x). */
  candidate: z.string(),
  baseline: z.string(),
  candidateEpisode: z.string(),
  baselineEpisode: z.string(),
  judge: z.string(),
  judgeModel: z.string(),
  seed: z.number().int(),
  order: z.enum(['candidate-first', 'baseline-first']),
  status: z.enum(['ok', 'failed']),
  /** From the candidate's side; null when no valid verdict came within the repairs. */
  outcome: z.enum(['win', 'loss', 'tie']).nullable(),
  /** Replies sent back for repair before the verdict (or before giving up). */
  repairs: z.number().int().nonnegative(),
  promptHashes: z.object({ system: z.string(), user: z.string() }),
  attempts: z.array(
    z.object({
      rawOutput: z.string(),
      finishReason: z.string().nullable(),
      parse: z.union([
        z.object({ ok: z.literal(true), winner: z.string(), rationale: z.string() }),
        z.object({ ok: z.literal(false), error: z.string() }),
      ]),
      usage: JudgeUsage.nullable(),
    }),
  ),
  usage: JudgeUsage,
  failure: z.string().nullable(),
});
export type JudgmentRow = z.infer<typeof JudgmentRow>;

/** The design one side of a workflow transfer ran on one task: its generation's search champion. */
export const TransferDesignRecord = z.object({
  /** The generation whose search found it. */
  generation: z.string(),
  /** The search's champion: a version, or `reference` when no version beat the bare task (the side ran bare). */
  champion: z.string(),
  /** `workflowHash` of the design, as the side's episodes record it; null for the bare task. */
  designHash: z.string().nullable(),
});
export type TransferDesignRecord = z.infer<typeof TransferDesignRecord>;

/** One workflow transfer of the evaluation (the paper's Table 2): which design each side ran on each task. */
export const TransferRecord = z.object({
  executor: z.string(),
  designsFrom: z.string(),
  against: z.string(),
  /** The candidate side's label, as comparisons, figures and episodes name it. */
  candidate: z.string(),
  baseline: z.string(),
  tasks: z.array(
    z.object({
      task: z.string(),
      candidate: TransferDesignRecord,
      baseline: TransferDesignRecord,
      /** Both sides ran the same design (or both the bare task): the pair differs by its sampling alone. */
      sameDesign: z.boolean(),
    }),
  ),
  /** Tasks one of the two searches covered (or `evaluation.tasks` named) that were left out, and why. */
  leftOut: z.array(z.object({ task: z.string(), reason: z.string() })),
});
export type TransferRecord = z.infer<typeof TransferRecord>;

/** The judged step's output: its rows' outcomes, so a resumed evaluation knows them without the file. */
export const JudgmentStepOutput = z.object({
  /** One per order judged: two under `orders: both`, one under `random`. */
  outcomes: z
    .array(z.enum(['win', 'loss', 'tie']).nullable())
    .min(1)
    .max(2),
  repairs: z.number().int().nonnegative(),
});

const Counts = z.object({
  episodes: z.number().int().nonnegative(),
  failedEpisodes: z.number().int().nonnegative(),
  judgments: z.number().int().nonnegative(),
  /** Judgments that needed at least one repair and then gave a valid verdict. */
  repairedJudgments: z.number().int().nonnegative(),
  /** No valid verdict within the repairs: recorded, left out of every figure. */
  failedJudgments: z.number().int().nonnegative(),
  grades: z.number().int().nonnegative(),
  failedGrades: z.number().int().nonnegative(),
});

/**
 * What a model or judge that is not a language model stands in as (the toy model: `toy`), shown beside its name
 * wherever its figures appear; null for a real model.
 */
const StandIn = z.string().min(1).nullable();

function withStandIn(entries: unknown): unknown {
  if (!Array.isArray(entries)) return entries;
  return entries.map((entry: unknown) => {
    if (typeof entry !== 'object' || entry === null) return entry;
    const { toy, ...rest } = entry as Record<string, unknown>;
    return { ...rest, standIn: toy === true ? 'toy' : null };
  });
}

/**
 * Before version 3 every task had a grader: the grading coverage of an older summary is every task graded, nothing
 * left out.
 */
function withEveryTaskGraded(body: Record<string, unknown>): Record<string, unknown> {
  const figures = body.figures;
  if (typeof figures !== 'object' || figures === null) return body;
  const grading: GradingCoverage = {
    tasksWithGrader: Array.isArray(body.tasks) ? body.tasks.filter((task) => typeof task === 'string') : [],
    tasksWithoutGrader: [],
    loopTasksWithoutGrader: [],
    rolloutsWithoutGrader: 0,
    note: null,
    omitted: [],
  };
  return { ...body, figures: { ...figures, grading } };
}

/**
 * The figures of an older summary computed again from the inputs it records, with the settings its figures were
 * computed with: its judgments, grades and runs are kept as they were, only the statistics change.
 */
function withFiguresRecomputed(body: Record<string, unknown>): Record<string, unknown> {
  const inputs = body.inputs as Record<string, unknown> | undefined;
  const figures = body.figures as { settings?: Record<string, unknown> } | undefined;
  if (typeof inputs !== 'object' || inputs === null || typeof figures?.settings !== 'object') return body;
  const { unit: _unit, ...settings } = figures.settings;
  return {
    ...body,
    figures: computeEvaluationFigures(
      {
        judgments: inputs.judgedPairs as JudgedPair[],
        rollouts: inputs.rollouts as GradedRollout[],
        selectedRuns: inputs.selectedRuns as SelectedRun[],
        agreementSamples: inputs.agreementSamples as AgreementSample[],
        tasksWithoutGrader: (inputs.tasksWithoutGrader as string[] | undefined) ?? [],
      },
      { ...settings, comparisons: body.comparisons as FigureOptions['comparisons'] },
    ),
  };
}

/** `evaluation/<name>/summary.json`: every figure and the inputs it came from. */
export const EvaluationSummaryRecord = defineRecord({
  kind: 'evaluation-summary',
  version: 5,
  // Version 1 marked the toy model's models and judges with `toy: true`; version 2 with the label of what stands in.
  // Version 3 added `figures.grading` and `inputs.tasksWithoutGrader`: a task may have no grader.
  // Version 4 made the episode pair the unit of every win-rate interval and test: older figures are recomputed from the
  // summary's own inputs with its own settings.
  // Version 5 added `figures.judgeDirectedText` and each selected run's `judgeDirected`: older figures are recomputed,
  // their selected runs counted as not scanned.
  migrate: (body, fromVersion) => {
    const standIns =
      fromVersion === 1
        ? { ...body, models: withStandIn(body.models), judges: withStandIn(body.judges) }
        : body;
    const graded = fromVersion < 3 ? withEveryTaskGraded(standIns) : standIns;
    return withFiguresRecomputed(graded);
  },
  schema: z.object({
    run: z.string(),
    name: z.string(),
    /** The evaluation section as it was used (defaults filled in, the command line's changes applied). */
    settings: z.looseObject({}),
    models: z.array(
      z.object({ name: z.string(), servedAs: z.string(), parent: z.string().nullable(), standIn: StandIn }),
    ),
    judges: z.array(z.object({ name: z.string(), model: z.string(), standIn: StandIn })),
    tasks: z.array(z.string()),
    conditions: z.array(EvaluationCondition),
    /** The generation comparisons, then each workflow transfer's (its sides' labels, in the `transfer` condition). */
    comparisons: z.array(z.object({ candidate: z.string(), baseline: z.string() })),
    /** The workflow transfers (`evaluation.transfer`), with the design each side ran per task. */
    transfer: z.array(TransferRecord).default([]),
    counts: Counts,
    figures: EvaluationFigures,
    inputs: z.object({
      judgedPairs: z.array(JudgedPair),
      rollouts: z.array(GradedRollout),
      selectedRuns: z.array(SelectedRun),
      agreementSamples: z.array(AgreementSample),
      /**
       * The tasks here (evaluated, or of the loop's collections) whose task.yaml names no grader: measured by the
       * external judges alone; `figures.grading` says what the grade figures cover.
       */
      tasksWithoutGrader: z.array(z.string()).default([]),
    }),
    /** What the evaluation spent (its judges' calls and its episodes), from the run's spending journal; absent in older summaries. */
    spending: SpendingSummary.optional(),
    /** `evaluation.searchCoverage`: how soon each generation's searches found a design the external judges prefer. */
    searchCoverage: SearchCoverageFigure.optional(),
  }),
});
export type EvaluationSummary = z.infer<(typeof EvaluationSummaryRecord)['schema']>;
