import { bootstrapIntervals, type BootstrapOptions } from './bootstrap.js';
import { hull, type Interval } from '../../statistics/interval.js';
import { wilsonInterval } from '../../statistics/wilson.js';
import type { EvaluatorAgreement } from '../evaluation-figures.js';
import { compositeKey, distinctSorted, groupBy } from './grouping.js';
import type { AgreementSample, EvaluatorVerdict, GradedRollout, JudgedPair, PairOutcome } from './inputs.js';
import { gradesOf } from './oracle-grades.js';
import { cohenKappa } from './kappa.js';
import { oraclePreference } from './oracle-preference.js';

/** The evaluator name of the oracle's preference (higher grade wins) among the verdicts. */
export const oracleEvaluator = 'oracle';

/**
 * The evaluation's own verdicts for agreement: every judgment, its item being the episode pair
 * (task, condition, replicate, candidate, baseline), and the oracle's preference on each episode
 * pair some judge judged where both episodes were graded.
 */
export function evaluationVerdicts(
  judgments: readonly JudgedPair[],
  rollouts: readonly GradedRollout[],
  tieMargin: number,
): EvaluatorVerdict[] {
  const grades = new Map(
    gradesOf(rollouts).map((rollout) => [
      compositeKey(rollout.task, rollout.condition, rollout.replicate, rollout.generation),
      rollout.grade,
    ]),
  );
  const verdicts: EvaluatorVerdict[] = [];
  const oracleItems = new Set<string>();
  for (const judgment of judgments) {
    const item = compositeKey(judgment.condition, judgment.replicate, judgment.candidate, judgment.baseline);
    verdicts.push({ evaluator: judgment.judge, task: judgment.task, item, outcome: judgment.outcome });
    if (oracleItems.has(compositeKey(judgment.task, item))) continue;
    oracleItems.add(compositeKey(judgment.task, item));
    const place = (generation: string): number | undefined =>
      grades.get(compositeKey(judgment.task, judgment.condition, judgment.replicate, generation));
    const candidate = place(judgment.candidate);
    const baseline = place(judgment.baseline);
    if (candidate === undefined || baseline === undefined) continue;
    verdicts.push({
      evaluator: oracleEvaluator,
      task: judgment.task,
      item,
      outcome: oraclePreference(candidate, baseline, tieMargin),
    });
  }
  return verdicts;
}

/**
 * One evaluator's verdict on an item from all it said about it (several seeds, both orders): the
 * side with the larger share of its points (win 1, tie ½), a tie when the shares are equal. A judge
 * that always prefers the first-shown episode thus ends at a tie on every pair judged in both orders.
 */
export function combinedVerdict(outcomes: readonly PairOutcome[]): PairOutcome {
  // Doubled points keep the comparison with half the count exact.
  const doubledPoints = outcomes.reduce(
    (sum, outcome) => sum + (outcome === 'win' ? 2 : outcome === 'tie' ? 1 : 0),
    0,
  );
  return doubledPoints > outcomes.length ? 'win' : doubledPoints < outcomes.length ? 'loss' : 'tie';
}

/**
 * Agreement and Cohen's κ of every two evaluators of a sample, over the items both gave a verdict
 * on (each evaluator's verdicts on an item combined first: an item, such as an episode pair, is the unit), with
 * Wilson's interval of the agreement and, for κ, the hull of a bootstrap resampling items within tasks and κ at the
 * ends of the agreement's interval.
 */
export function evaluatorAgreement(
  sample: AgreementSample,
  options: BootstrapOptions & { confidence?: number },
): EvaluatorAgreement[] {
  const combined = new Map<string, Map<string, { task: string; outcome: PairOutcome }>>();
  for (const verdicts of groupBy(sample.verdicts, (verdict) =>
    compositeKey(verdict.evaluator, verdict.task, verdict.item),
  ).values()) {
    const { evaluator, task, item } = verdicts[0]!;
    let items = combined.get(evaluator);
    if (!items) combined.set(evaluator, (items = new Map()));
    items.set(compositeKey(task, item), {
      task,
      outcome: combinedVerdict(verdicts.map((verdict) => verdict.outcome)),
    });
  }
  const evaluators = distinctSorted(combined.keys());
  const figures: EvaluatorAgreement[] = [];
  for (let first = 0; first < evaluators.length; first++) {
    for (let second = first + 1; second < evaluators.length; second++) {
      const left = combined.get(evaluators[first]!)!;
      const right = combined.get(evaluators[second]!)!;
      const shared = [...left].flatMap(([item, verdict]) => {
        const other = right.get(item);
        return other ? [{ task: verdict.task, first: verdict.outcome, second: other.outcome }] : [];
      });
      figures.push(agreementFigure(sample.name, [evaluators[first]!, evaluators[second]!], shared, options));
    }
  }
  return figures;
}

function agreementFigure(
  sampleName: string,
  evaluators: [string, string],
  shared: readonly { task: string; first: PairOutcome; second: PairOutcome }[],
  options: BootstrapOptions & { confidence?: number },
): EvaluatorAgreement {
  const confidence = options.confidence ?? 0.95;
  const measure = (
    items: readonly { first: PairOutcome; second: PairOutcome }[],
  ): [number | null, number | null] => {
    const { agreement, kappa } = cohenKappa(
      items.map((item) => item.first),
      items.map((item) => item.second),
    );
    return [agreement, kappa];
  };
  const [agreement, kappa] = measure(shared);
  const agreeing = shared.filter((item) => item.first === item.second).length;
  const agreementInterval = wilsonInterval(agreeing, shared.length, confidence);
  const strata = [...groupBy(shared, (item) => item.task).values()];
  const kappaBootstrap =
    kappa === null
      ? null
      : bootstrapIntervals(strata, (resample) => [measure(resample.flat())[1]], options)[0];
  return {
    sample: sampleName,
    evaluators,
    items: shared.length,
    agreement,
    agreementInterval,
    kappa,
    kappaInterval:
      kappa === null || agreementInterval === null
        ? null
        : hull(kappaBootstrap, kappaAtAgreement(agreementInterval, chanceAgreement(shared))),
    intervalMethod: 'wilson-and-bootstrap',
  };
}

/** p_e of Cohen's κ: the agreement expected if each evaluator kept its own shares of verdicts but chose at random. */
function chanceAgreement(items: readonly { first: PairOutcome; second: PairOutcome }[]): number {
  let chance = 0;
  for (const outcome of ['win', 'loss', 'tie'] as const) {
    const first = items.filter((item) => item.first === outcome).length / items.length;
    const second = items.filter((item) => item.second === outcome).length / items.length;
    chance += first * second;
  }
  return chance;
}

/** κ = (p_o − p_e)/(1 − p_e) at both ends of an interval of p_o, chance agreement held at its observed value. */
function kappaAtAgreement(agreement: Interval, chance: number): Interval {
  const kappa = (observed: number) => Math.max(-1, (observed - chance) / (1 - chance));
  return { lower: kappa(agreement.lower), upper: kappa(agreement.upper) };
}
