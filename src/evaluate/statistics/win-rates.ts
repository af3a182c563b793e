import { bootstrapIntervals, type BootstrapOptions } from './bootstrap.js';
import type { JudgeWinRates, WinRateCell } from './figures-schema.js';
import { groupBy } from './grouping.js';
import type { PairOutcome } from './inputs.js';
import { signTest } from './sign-test.js';
import { wilsonInterval } from './wilson.js';

/** One verdict on one episode pair of a comparison, from the candidate's view. */
export interface ScoredVerdict {
  task: string;
  replicate: number;
  outcome: PairOutcome;
}

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
  const judgments = decided + tally.ties;
  return {
    winRate: decided === 0 ? null : tally.wins / decided,
    winRateWithTies: judgments === 0 ? null : (tally.wins + tally.ties / 2) / judgments,
  };
}

export function winRateCell(verdicts: readonly ScoredVerdict[], confidence: number): WinRateCell {
  const tally = tallyOutcomes(verdicts.map((verdict) => verdict.outcome));
  const judgments = verdicts.length;
  return {
    ...tally,
    judgments,
    episodePairs: new Set(verdicts.map((verdict) => `${verdict.task}\u0000${verdict.replicate}`)).size,
    ...winRates(tally),
    winRateWilson: wilsonInterval(tally.wins, tally.wins + tally.losses, confidence),
    winRateWithTiesWilson: wilsonInterval(tally.wins + tally.ties / 2, judgments, confidence),
    signTestP: signTest(tally.wins, tally.losses),
  };
}

/**
 * Win rates of one judge (or a pool of judges) in one comparison and condition: per task with
 * Wilson intervals, and pooled over tasks with bootstrap intervals that resample episode pairs
 * (replicates) within each task.
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
  const strata = [...byTask.values()].map((taskVerdicts) =>
    [...groupBy(taskVerdicts, (verdict) => String(verdict.replicate)).values()].map((clusterVerdicts) =>
      tallyOutcomes(clusterVerdicts.map((verdict) => verdict.outcome)),
    ),
  );
  const [winRateBootstrap, winRateWithTiesBootstrap] = bootstrapIntervals(
    strata,
    (resample) => {
      const total = { wins: 0, losses: 0, ties: 0 };
      for (const clusters of resample) {
        for (const cluster of clusters) {
          total.wins += cluster.wins;
          total.losses += cluster.losses;
          total.ties += cluster.ties;
        }
      }
      const rates = winRates(total);
      return [rates.winRate, rates.winRateWithTies];
    },
    options,
  );
  const pooled = winRateCell(verdicts, options.confidence);
  return {
    judge,
    perTask,
    pooled: {
      ...pooled,
      // When every decisive verdict went one way, no resample can differ and the bootstrap interval has no width
      // ([1, 1] after four wins): the pooled Wilson interval is then the honest one.
      winRateBootstrap:
        pooled.wins === 0 || pooled.losses === 0 ? pooled.winRateWilson : (winRateBootstrap ?? null),
      winRateWithTiesBootstrap: winRateWithTiesBootstrap ?? null,
    },
  };
}
