import { z } from 'zod';

import { UserError } from '../../errors.js';
import { describeIssues } from '../../store/describe-issues.js';
import { evaluationVerdicts, evaluatorAgreement, oracleEvaluator } from './agreement.js';
import type { BootstrapOptions } from './bootstrap.js';
import { delegationRates } from './delegation.js';
import type { ComparisonWinRates, EvaluationFigures, JudgeWinRates } from '../evaluation-figures.js';
import { gradingCoverage } from './grading-coverage.js';
import { compositeKey, distinctSorted, groupBy } from './grouping.js';
import { AgreementSample, GradedRollout, JudgedPair, SelectedRun } from './inputs.js';
import { gradeSummaries, gradesOf, pairedGradeDifferences } from './oracle-grades.js';
import { oraclePreference } from './oracle-preference.js';
import { orderInconsistency } from './order-inconsistency.js';
import { judgeDirectedText, rewardHacking } from './reward-hacking.js';
import { generationStrengths } from './strengths.js';
import { tokenEfficiency } from './token-efficiency.js';
import { judgeWinRates, type ScoredVerdict } from './win-rates.js';

const Label = z.string().min(1, 'must be a non-empty label');

const FigureOptionsSchema = z.object({
  /** Candidate against baseline, e.g. [{candidate: "L1", baseline: "L0"}]; default: every pair present in the judgments. */
  comparisons: z
    .array(
      z
        .object({ candidate: Label, baseline: Label })
        .refine(
          (comparison) => comparison.candidate !== comparison.baseline,
          'compares a generation with itself',
        ),
    )
    .optional(),
  /** The generation others are measured against (grade differences, token ratios, strengths). Default "L0". */
  reference: Label.default('L0'),
  /** Grades within this many points of each other (inclusive) make the oracle's preference a tie. Default 2. */
  tieMargin: z.number().finite().nonnegative().default(2),
  /** Seed of every bootstrap (each figure restarts from it, so no figure depends on which others are computed). Default 0. */
  bootstrapSeed: z.number().int().nonnegative().default(0),
  /** Resamples per bootstrap. Default 1000. */
  resamples: z.number().int().min(1).default(1000),
  /** Default 0.95. */
  confidence: z.number().gt(0).lt(1).default(0.95),
  /** The condition other conditions are compared with for token efficiency. Default "single-agent". */
  singleAgentCondition: Label.default('single-agent'),
  /** Judges pooled into "all judges" and into the strengths. Default: every judge in the judgments. */
  pooledJudges: z.array(Label).optional(),
});
export type FigureOptions = z.input<typeof FigureOptionsSchema>;

export interface FigureInputs {
  judgments: readonly JudgedPair[];
  rollouts: readonly GradedRollout[];
  /** Runs the loop selected for training, for the reward-hacking counts. */
  selectedRuns?: readonly SelectedRun[];
  /** Further verdict sets for evaluator agreement, e.g. a sample of each generation's tournament matches. */
  agreementSamples?: readonly AgreementSample[];
  /**
   * Tasks (of the rollouts, the selected runs or the samples) whose task.yaml names no grader: their rollouts carry no
   * grade, the grade figures leave them out and say so (`grading`). Default: every task has a grader.
   */
  tasksWithoutGrader?: readonly string[];
}

/** The judge label of the pooled row. */
export const allJudges = 'all judges';

/**
 * Every figure of an evaluation from its judgments and graded rollouts. Pure: the same inputs and
 * options give the same figures, bootstrap intervals included. Inputs are validated first; a
 * judgment or rollout recorded twice is refused, since it would count twice.
 */
export function computeEvaluationFigures(
  inputs: FigureInputs,
  options: FigureOptions = {},
): EvaluationFigures {
  const settings = parse(FigureOptionsSchema, options, 'evaluation figure options');
  const judgments = parse(z.array(JudgedPair), inputs.judgments, 'judgments');
  const rollouts = parse(z.array(GradedRollout), inputs.rollouts, 'rollouts');
  const selectedRuns = parse(z.array(SelectedRun), inputs.selectedRuns ?? [], 'selected runs');
  const samples = parse(z.array(AgreementSample), inputs.agreementSamples ?? [], 'agreement samples');
  refuseDuplicates(judgments, 'judgment', (judgment) =>
    compositeKey(
      judgment.task,
      judgment.condition,
      judgment.replicate,
      judgment.candidate,
      judgment.baseline,
      judgment.judge,
      judgment.seed,
      judgment.order,
    ),
  );
  for (const [index, judgment] of judgments.entries()) {
    if (judgment.judge === oracleEvaluator || judgment.judge === allJudges) {
      throw new UserError(
        `judgments[${index}].judge: "${judgment.judge}" is reserved for a figure's own row; name the judge otherwise (the oracle's preference is derived from the rollouts' grades)`,
      );
    }
  }
  refuseDuplicates(rollouts, 'rollout', (rollout) =>
    compositeKey(rollout.task, rollout.condition, rollout.replicate, rollout.generation),
  );
  const withoutGrader = new Set(
    parse(z.array(Label), inputs.tasksWithoutGrader ?? [], 'tasks without a grader'),
  );
  for (const [index, rollout] of rollouts.entries()) {
    if (withoutGrader.has(rollout.task) && rollout.grade !== null) {
      throw new UserError(
        `rollouts[${index}]: task "${rollout.task}" has no grader, yet the rollout has a grade; a task listed without a grader has none`,
      );
    }
  }
  for (const sample of samples) {
    const graded = sample.verdicts.find(
      (verdict) => verdict.evaluator === oracleEvaluator && withoutGrader.has(verdict.task),
    );
    if (graded) {
      throw new UserError(
        `agreement sample "${sample.name}": task "${graded.task}" has no grader, yet it has an oracle verdict; a task listed without a grader has none`,
      );
    }
  }
  // The grade figures see the tasks with a grader alone: an episode no grader could grade is not a failed grade.
  const gradable = rollouts.filter((rollout) => !withoutGrader.has(rollout.task));
  const gradableRuns = selectedRuns.filter((run) => !withoutGrader.has(run.task));

  const bootstrap: BootstrapOptions & { confidence: number } = {
    seed: settings.bootstrapSeed,
    resamples: settings.resamples,
    confidence: settings.confidence,
  };
  const pooledJudges = settings.pooledJudges ?? distinctSorted(judgments.map((judgment) => judgment.judge));
  const pooled = judgments.filter((judgment) => pooledJudges.includes(judgment.judge));
  const comparisons =
    settings.comparisons ??
    [...groupBy(judgments, (judgment) => compositeKey(judgment.candidate, judgment.baseline)).values()].map(
      (group) => ({
        candidate: group[0]!.candidate,
        baseline: group[0]!.baseline,
      }),
    );

  return {
    settings: {
      unit: 'episode pair',
      confidence: settings.confidence,
      tieMargin: settings.tieMargin,
      bootstrapSeed: settings.bootstrapSeed,
      resamples: settings.resamples,
      reference: settings.reference,
      singleAgentCondition: settings.singleAgentCondition,
      pooledJudges: [...pooledJudges],
    },
    counts: {
      judgments: judgments.length,
      rollouts: rollouts.length,
      ungradedRollouts: gradable.length - gradesOf(gradable).length,
      selectedRuns: selectedRuns.length,
    },
    winRates: comparisons.flatMap((comparison) =>
      comparisonWinRates(comparison, judgments, gradable, pooledJudges, settings.tieMargin, bootstrap),
    ),
    orderInconsistency: orderInconsistency(judgments, settings.confidence),
    strengths: [...groupBy(pooled, (judgment) => judgment.condition)].map(([condition, conditionJudgments]) =>
      generationStrengths(condition, conditionJudgments, settings.reference, bootstrap),
    ),
    grades: gradeSummaries(gradable, bootstrap),
    gradeDifferences: pairedGradeDifferences(gradable, settings.reference, bootstrap),
    tokens: tokenEfficiency(rollouts, {
      ...bootstrap,
      reference: settings.reference,
      singleAgentCondition: settings.singleAgentCondition,
    }),
    delegation: delegationRates(rollouts, settings.confidence),
    agreement: [
      { name: 'evaluation', verdicts: evaluationVerdicts(judgments, gradable, settings.tieMargin) },
      ...samples,
    ].flatMap((sample) => evaluatorAgreement(sample, bootstrap)),
    rewardHacking: rewardHacking(gradableRuns),
    judgeDirectedText: judgeDirectedText(selectedRuns),
    grading: gradingCoverage({
      evaluationTasks: [...rollouts, ...judgments].map((entry) => entry.task),
      selectedRunTasks: selectedRuns.map((run) => run.task),
      sampleTasks: samples.flatMap((sample) => sample.verdicts.map((verdict) => verdict.task)),
      tasksWithoutGrader: withoutGrader,
      rolloutsWithoutGrader: rollouts.length - gradable.length,
    }),
  };
}

/**
 * One comparison's win rates in each condition it was judged or run in: per judge, pooled over the
 * pooled judges (when there are several), and by the oracle (higher grade wins) where both
 * episodes of a pair were graded.
 */
function comparisonWinRates(
  comparison: { candidate: string; baseline: string },
  judgments: readonly JudgedPair[],
  rollouts: readonly GradedRollout[],
  pooledJudges: readonly string[],
  tieMargin: number,
  bootstrap: BootstrapOptions & { confidence: number },
): ComparisonWinRates[] {
  const judged = judgments.filter(
    (judgment) => judgment.candidate === comparison.candidate && judgment.baseline === comparison.baseline,
  );
  const sides = gradesOf(rollouts).filter(
    (rollout) => rollout.generation === comparison.candidate || rollout.generation === comparison.baseline,
  );
  const conditions = distinctSorted([...judged, ...sides].map((entry) => entry.condition));
  return conditions.flatMap((condition) => {
    const inCondition = judged.filter((judgment) => judgment.condition === condition);
    const judges: JudgeWinRates[] = [...groupBy(inCondition, (judgment) => judgment.judge)].map(
      ([judge, verdicts]) => judgeWinRates(judge, verdicts, bootstrap),
    );
    const pooled = inCondition.filter((judgment) => pooledJudges.includes(judgment.judge));
    if (distinctSorted(pooled.map((judgment) => judgment.judge)).length > 1) {
      judges.push(judgeWinRates(allJudges, pooled, bootstrap));
    }
    const oracle = oracleVerdicts(
      comparison,
      sides.filter((rollout) => rollout.condition === condition),
      tieMargin,
    );
    if (oracle.length > 0) judges.push(judgeWinRates(oracleEvaluator, oracle, bootstrap));
    return judges.length === 0 ? [] : [{ ...comparison, condition, judges }];
  });
}

/** The oracle's preference on every (task, replicate) where both generations' episodes were graded. */
function oracleVerdicts(
  comparison: { candidate: string; baseline: string },
  graded: readonly (GradedRollout & { grade: number })[],
  tieMargin: number,
): ScoredVerdict[] {
  return [...groupBy(graded, (rollout) => compositeKey(rollout.task, rollout.replicate)).values()].flatMap(
    (pair) => {
      const candidate = pair.find((rollout) => rollout.generation === comparison.candidate);
      const baseline = pair.find((rollout) => rollout.generation === comparison.baseline);
      if (!candidate || !baseline) return [];
      return [
        {
          task: candidate.task,
          replicate: candidate.replicate,
          outcome: oraclePreference(candidate.grade, baseline.grade, tieMargin),
        },
      ];
    },
  );
}

function parse<Schema extends z.ZodType>(schema: Schema, value: unknown, what: string): z.output<Schema> {
  const result = schema.safeParse(value);
  if (!result.success) throw new UserError(`${what}: ${describeIssues(result.error)}`);
  return result.data;
}

function refuseDuplicates<Item>(items: readonly Item[], what: string, keyOf: (item: Item) => string): void {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const key = keyOf(item);
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      throw new UserError(
        `${what}s [${earlier}] and [${index}] are the same ${what} (${key.split('\u0000').join(', ')}): each must be counted once; drop the repeat`,
      );
    }
    seen.set(key, index);
  });
}
