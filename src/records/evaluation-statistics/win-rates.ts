import { bootstrapIntervals, type BootstrapOptions } from './bootstrap.js';
import { clopperPearsonInterval } from '../../statistics/clopper-pearson.js';
import type { JudgeWinRates, WinRateCell } from '../evaluation-figures.js';
import { groupBy, mean } from './grouping.js';
import { hull, type Interval } from '../../statistics/interval.js';
import type { PairOutcome } from './inputs.js';
import { pairPreferences, type PairPreference, type ScoredVerdict } from './pair-preferences.js';
import { signTest } from '../../statistics/sign-test.js';
import { wilsonInterval } from '../../statistics/wilson.js';

export type { ScoredVerdict } from './pair-preferences.js';

export interface OutcomeTally {
  wins: number;
  losses: number;
  ties: number;
}

export function tallyOutcomes(outcomes: Iterable<PairOutcome>): OutcomeTally {
  const tally = { wins: 0, losses: 0, ties: 0 };
  for (const outcome of outcomes) {
    if (outcome === 'win') tally.wins++;
    else if (outcome === 'loss') tally.losses++;
    else tally.ties++;
  }
  return tally;
}

/** W/(W+L), the official definition, and (W + T/2)/N; null where the denominator is 0. */
export function winRates(tally: OutcomeTally): { winRate: number | null; winRateWithTies: number | null } {
  const decided = tally.wins + tally.losses;
  const total = decided + tally.ties;
  return {
    winRate: decided === 0 ? null : tally.wins / decided,
    winRateWithTies: total === 0 ? null : (tally.wins + tally.ties / 2) / total,
  };
}

/**
 * The win rates of one task (or of pairs pooled over tasks), the episode pair as the unit: each pair is a win, a loss
 * or a tie by its preference (the mean of its judgments), and every interval and test is over pairs.
 * - W/(W+L) over the decided pairs, with the Clopper–Pearson exact interval and the exact sign test, which agree: the
 *   interval leaves out ½ exactly when the test rejects at the same level.
 * - (W + T/2)/N over all pairs, with the hull of two valid intervals: Wilson's over the pairs (a tie half a win), and
 *   the exact interval of the decided pairs carried over with the ties held fixed, as the sign test holds them. It
 *   therefore also leaves out ½ only when the sign test rejects, and it keeps a width when every pair tied.
 * - The judgments as recorded, with the paper's pooled W/(W+L) over them, for comparison with its tables: they are
 *   not independent of each other, so they get no interval and no test.
 */
export function winRateCell(verdicts: readonly ScoredVerdict[], confidence: number): WinRateCell {
  return cellOfPairs(pairPreferences(verdicts), verdicts, confidence);
}

function cellOfPairs(
  pairs: readonly PairPreference[],
  verdicts: readonly ScoredVerdict[],
  confidence: number,
): WinRateCell {
  const tally = tallyOutcomes(pairs.map((pair) => pair.outcome));
  const decided = tally.wins + tally.losses;
  const exact = clopperPearsonInterval(tally.wins, decided, confidence);
  const rates = winRates(tally);
  const judged = tallyOutcomes(verdicts.map((verdict) => verdict.outcome));
  return {
    pairs: pairs.length,
    ...tally,
    winRate: rates.winRate,
    winRateInterval: exact,
    winRateWithTies: rates.winRateWithTies,
    winRateWithTiesInterval:
      pairs.length === 0
        ? null
        : hull(
            wilsonInterval(tally.wins + tally.ties / 2, pairs.length, confidence),
            withTiesHeldFixed(exact, tally, pairs.length),
          ),
    meanPreference: mean(pairs.map((pair) => pair.preference)),
    signTestP: signTest(tally.wins, tally.losses),
    judgments: { count: verdicts.length, ...judged, winRate: winRates(judged).winRate },
  };
}

/** (q·D + T/2)/N at both ends of q's interval: the with-ties rate for each decided-pair rate q, the ties as counted. */
function withTiesHeldFixed(
  decidedInterval: Interval | null,
  tally: OutcomeTally,
  pairs: number,
): Interval | null {
  const decided = tally.wins + tally.losses;
  if (decidedInterval === null) return { lower: tally.ties / 2 / pairs, upper: tally.ties / 2 / pairs };
  return {
    lower: (decidedInterval.lower * decided + tally.ties / 2) / pairs,
    upper: (decidedInterval.upper * decided + tally.ties / 2) / pairs,
  };
}

/**
 * Win rates of one judge (or a pool of judges: a pair's preference is then the mean over all their judgments of it)
 * in one comparison and condition: per task, and pooled over tasks. The pooled intervals are a bootstrap that
 * resamples pairs within tasks, widened where needed to the pooled pairs' exact intervals above, so that no pooled
 * interval leaves out ½ unless the sign test over the decided pairs rejects, and a bootstrap whose resamples cannot
 * differ (one decided pair, or all one way) never claims certainty.
 */
export function judgeWinRates(
  judge: string,
  verdicts: readonly ScoredVerdict[],
  options: BootstrapOptions & { confidence: number },
): JudgeWinRates {
  const byTask = groupBy(verdicts, (verdict) => verdict.task);
  const perTask = [...byTask].map(([task, taskVerdicts]) => ({
    task,
    ...winRateCell(taskVerdicts, options.confidence),
  }));
  const pairs = pairPreferences(verdicts);
  const strata = [...groupBy(pairs, (pair) => pair.task).values()].map((taskPairs) =>
    taskPairs.map((pair) => pair.outcome),
  );
  const [winRateBootstrap, winRateWithTiesBootstrap] = bootstrapIntervals(
    strata,
    (resample) => {
      const rates = winRates(tallyOutcomes(resample.flat()));
      return [rates.winRate, rates.winRateWithTies];
    },
    options,
  );
  const pooled = cellOfPairs(pairs, verdicts, options.confidence);
  return {
    judge,
    perTask,
    pooled: {
      ...pooled,
      winRateInterval: pooled.winRate === null ? null : hull(winRateBootstrap, pooled.winRateInterval),
      winRateWithTiesInterval:
        pooled.winRateWithTies === null
          ? null
          : hull(winRateWithTiesBootstrap, pooled.winRateWithTiesInterval),
      winRateBootstrap: winRateBootstrap ?? null,
      winRateWithTiesBootstrap: winRateWithTiesBootstrap ?? null,
    },
  };
}
