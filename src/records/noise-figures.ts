import type { NoiseFigures, NoiseShare, PromotionRerun, SelfComparison } from './repeat-records.js';
import type { ChampionMatch } from './search-records.js';
import { wilsonInterval } from '../statistics/wilson.js';

/**
 * The search's noise (the paper's Figure 8), counted from judgments between runs of unchanged designs:
 *
 * - **verdict flips**: for each champion change, each match of the decision (candidate against champion; under the
 *   `official` rule against the reference, and the arbitration) is played at run 0 (the search's own runs) and at
 *   each rerun index i (the two designs' i-th reruns). Every two indices at which both verdicts exist form a pair;
 *   it flips when the verdicts differ (the candidate won, tied or lost). A walkover (the candidate's run failed) is
 *   a loss, as the rule counts it.
 * - **spurious promotions**: two runs of one design, the later as the candidate, judged under the champion rule: the
 *   share the rule would have promoted, a champion changed by noise alone.
 * - **promotions repeated**: the share of a champion change's replays on reruns that changed the champion again.
 *
 * A judgment that gave no valid verdict decides nothing in the search; here it is left out of every share and
 * counted apart. Each share has its 95 % Wilson score interval (src/statistics/wilson.ts), which takes the pairs as
 * independent trials; they are not quite (a run appears in several pairs), so the interval is, if anything, too
 * narrow.
 */
export function noiseFigures(input: {
  selfComparisons: readonly SelfComparison[];
  promotions: readonly PromotionRerun[];
}): NoiseFigures {
  const flips = { count: 0, of: 0 };
  for (const promotion of input.promotions) {
    const runs = [promotion.original, ...promotion.replays.map((replay) => replay.matches)];
    for (const purpose of new Set(promotion.original.map((match) => match.purpose))) {
      const verdicts = runs.flatMap((matches) => {
        const verdict = verdictOf(matches.find((match) => match.purpose === purpose));
        return verdict === null ? [] : [verdict];
      });
      for (let a = 0; a < verdicts.length; a++) {
        for (let b = a + 1; b < verdicts.length; b++) {
          flips.of++;
          if (verdicts[a] !== verdicts[b]) flips.count++;
        }
      }
    }
  }
  const decidedSelf = input.selfComparisons.filter((comparison) => comparison.match.result !== 'failed');
  const replays = input.promotions.flatMap((promotion) => promotion.replays);
  const decidedReplays = replays.filter((replay) =>
    replay.matches.every((match) => match.result !== 'failed'),
  );
  const failedJudgments =
    input.selfComparisons.length -
    decidedSelf.length +
    replays.flatMap((replay) => replay.matches).filter((match) => match.result === 'failed').length;
  return figures(
    flips,
    { count: decidedSelf.filter((comparison) => comparison.promoted).length, of: decidedSelf.length },
    { count: decidedReplays.filter((replay) => replay.promoted).length, of: decidedReplays.length },
    failedJudgments,
  );
}

/** Several tasks' figures pooled: the counts added, the rates and intervals of the sums. */
export function poolNoiseFigures(all: readonly NoiseFigures[]): NoiseFigures {
  const sum = (pick: (figures: NoiseFigures) => NoiseShare) => ({
    count: all.reduce((total, figures) => total + pick(figures).count, 0),
    of: all.reduce((total, figures) => total + pick(figures).of, 0),
  });
  return figures(
    sum((figures) => figures.verdictFlips),
    sum((figures) => figures.spuriousPromotions),
    sum((figures) => figures.promotionsRepeated),
    all.reduce((total, figures) => total + figures.failedJudgments, 0),
  );
}

type Count = { count: number; of: number };

function figures(flips: Count, spurious: Count, repeated: Count, failedJudgments: number): NoiseFigures {
  return {
    verdictFlips: share(flips),
    spuriousPromotions: share(spurious),
    promotionsRepeated: share(repeated),
    failedJudgments,
    interval: { method: 'wilson', confidence: 0.95 },
  };
}

function share({ count, of }: Count): NoiseShare {
  return { count, of, rate: of === 0 ? null : count / of, interval: wilsonInterval(count, of, 0.95) };
}

/** A match's verdict from its candidate's side; null when it was not played or gave no verdict. */
function verdictOf(match: ChampionMatch | undefined): 'won' | 'tie' | 'lost' | null {
  if (!match || match.result === 'failed') return null;
  if (match.result === 'first') return 'won';
  return match.result === 'tie' ? 'tie' : 'lost';
}
