import { fitBradleyTerry } from '../../ranking/bradley-terry.js';
import type { Match } from '../../ranking/matches.js';
import { bootstrapIntervals, type BootstrapOptions } from './bootstrap.js';
import type { GenerationStrengths } from '../evaluation-figures.js';
import { compositeKey, distinctSorted, groupBy } from './grouping.js';
import type { JudgedPair } from './inputs.js';

/**
 * Bradley–Terry strengths of the generations from every judgment of one condition (all
 * comparisons, the pooled judges), fitted by src/ranking with its default weak prior. Scores are
 * reported as log-strength minus the reference generation's, so a score is the log-odds of beating
 * the reference; intervals refit on episode pairs resampled within tasks (an episode pair keeps all
 * its judgments, across comparisons, seeds and orders).
 */
export function generationStrengths(
  condition: string,
  judgments: readonly JudgedPair[],
  reference: string,
  options: BootstrapOptions,
): GenerationStrengths {
  const generations = distinctSorted(
    judgments.flatMap((judgment) => [judgment.candidate, judgment.baseline]),
  );
  const anchor = generations.includes(reference) ? reference : null;
  const relativeScores = (matches: readonly Match[]): number[] => {
    // Few players and many games each: MM converges in a handful of steps here, where Newman's
    // update was seen to take thousands (two generations, 192 judgments: 6 steps against 3,420).
    const { scores } = fitBradleyTerry(matches, { players: generations, algorithm: 'minorise-maximise' });
    const offset = anchor === null ? 0 : scores[anchor]!;
    return generations.map((generation) => scores[generation]! - offset);
  };
  const toMatch = (judgment: JudgedPair): Match => ({
    a: judgment.candidate,
    b: judgment.baseline,
    winner: judgment.outcome === 'win' ? 'a' : judgment.outcome === 'loss' ? 'b' : 'tie',
  });
  const matches = judgments.map(toMatch);
  if (matches.length === 0) return { condition, reference: anchor, judgments: 0, generations: [] };
  const scores = relativeScores(matches);
  const strata = [
    ...groupBy(
      matches.map((match, index) => ({ match, judgment: judgments[index]! })),
      (entry) => entry.judgment.task,
    ).values(),
  ].map((entries) =>
    [...groupBy(entries, (entry) => compositeKey(entry.judgment.replicate)).values()].map((cluster) =>
      cluster.map((entry) => entry.match),
    ),
  );
  const intervals = bootstrapIntervals(strata, (resample) => relativeScores(resample.flat(2)), options);
  return {
    condition,
    reference: anchor,
    judgments: matches.length,
    generations: generations.map((generation, index) => ({
      generation,
      score: scores[index]!,
      interval: intervals[index] ?? null,
    })),
  };
}
