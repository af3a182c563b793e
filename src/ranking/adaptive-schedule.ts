import { UserError } from '../errors.js';
import { fitBradleyTerry, type BradleyTerryFit } from './bradley-terry.js';
import { compareIds, type Match } from './matches.js';
import { orient, type Pair } from './schedules.js';
import { seededRandom } from './seeded-random.js';

export interface AdaptiveOptions {
  /** Everyone to rank, including players without a match yet; ids in `matches` are added. */
  players: readonly string[];
  /** Judgments so far; `a` is taken to be the one shown first. */
  matches: readonly Match[];
  /** How many top players are selected, e.g. 15 of 18. */
  cut: number;
  seed: number;
  /** Pairs to propose at most. Default 6. */
  batchSize?: number;
  /** A pair is never proposed once it has been judged this many times. Default 2 (once in each order). */
  maxMeetings?: number;
  /** Players considered on each side of the cut. Default 6. */
  window?: number;
  /** No player appears in more than this many pairs of one batch. Default 2. */
  perPlayerPerBatch?: number;
  /** Pairs whose fitted order is wrong with a lower probability than this are settled. Default 0.05. */
  minWrongOrderProbability?: number;
  /** Prior of the Bradley–Terry fit. Default 0.5. */
  prior?: number;
}

export interface ProposedPair extends Pair {
  /** Φ(−|θ_i − θ_j| / sqrt(se_i² + se_j²)): the chance the fitted order of the two is wrong. */
  wrongOrderProbability: number;
}

export interface AdaptiveBatch {
  /** Most uncertain first; empty when every pair across the cut is settled or capped. */
  pairs: ProposedPair[];
  fit: BradleyTerryFit;
}

/**
 * The adaptive schedule spends judgments where they can still change the selection: it fits
 * Bradley–Terry to the matches so far, takes the `window` players on each side of the cut, and
 * proposes the pairs straddling the cut whose order is most likely wrong (close scores, large
 * standard errors). The probability ignores the covariance of the two estimates, which with
 * shared opponents is positive, so it overstates the uncertainty a little: a conservative choice.
 * A pair already judged is shown next in the opposite order to its last judgment; a new pair in a
 * seeded random order.
 */
export function adaptiveSchedule(options: AdaptiveOptions): AdaptiveBatch {
  const batchSize = positiveInteger('batchSize', options.batchSize ?? 6);
  const maxMeetings = positiveInteger('maxMeetings', options.maxMeetings ?? 2);
  const window = positiveInteger('window', options.window ?? 6);
  const perPlayer = positiveInteger('perPlayerPerBatch', options.perPlayerPerBatch ?? 2);
  const threshold = options.minWrongOrderProbability ?? 0.05;

  const fit = fitBradleyTerry(options.matches, { players: options.players, prior: options.prior ?? 0.5 });
  const { ranking } = fit;
  if (!Number.isSafeInteger(options.cut) || options.cut < 1 || options.cut >= ranking.length) {
    throw new UserError(
      `adaptive schedule: cut ${options.cut} must be a whole number from 1 to ${ranking.length - 1} (there are ${ranking.length} players)`,
    );
  }

  const history = new Map<string, { meetings: number; lastFirst: string }>();
  for (const match of options.matches) {
    const key = pairKey(match.a, match.b);
    const entry = history.get(key);
    history.set(key, { meetings: (entry?.meetings ?? 0) + 1, lastFirst: match.a });
  }

  const above = ranking.slice(Math.max(0, options.cut - window), options.cut);
  const below = ranking.slice(options.cut, options.cut + window);
  const candidates: Array<{ better: string; worse: string; wrongOrderProbability: number }> = [];
  for (const better of above) {
    for (const worse of below) {
      if ((history.get(pairKey(better, worse))?.meetings ?? 0) >= maxMeetings) continue;
      const spread = Math.hypot(fit.stderr[better]!, fit.stderr[worse]!);
      const gap = Math.abs(fit.scores[better]! - fit.scores[worse]!);
      const wrongOrderProbability = spread > 0 ? normalTail(gap / spread) : gap === 0 ? 0.5 : 0;
      if (wrongOrderProbability >= threshold) candidates.push({ better, worse, wrongOrderProbability });
    }
  }
  candidates.sort(
    (left, right) =>
      right.wrongOrderProbability - left.wrongOrderProbability ||
      compareIds(left.better, right.better) ||
      compareIds(left.worse, right.worse),
  );

  const random = seededRandom(options.seed);
  const uses = new Map<string, number>();
  const pairs: ProposedPair[] = [];
  for (const candidate of candidates) {
    if (pairs.length === batchSize) break;
    if ((uses.get(candidate.better) ?? 0) >= perPlayer || (uses.get(candidate.worse) ?? 0) >= perPlayer)
      continue;
    uses.set(candidate.better, (uses.get(candidate.better) ?? 0) + 1);
    uses.set(candidate.worse, (uses.get(candidate.worse) ?? 0) + 1);
    const previous = history.get(pairKey(candidate.better, candidate.worse));
    const pair = previous
      ? previous.lastFirst === candidate.better
        ? { first: candidate.worse, second: candidate.better }
        : { first: candidate.better, second: candidate.worse }
      : orient(candidate.better, candidate.worse, random);
    pairs.push({ ...pair, wrongOrderProbability: candidate.wrongOrderProbability });
  }
  return { pairs, fit };
}

function pairKey(one: string, other: string): string {
  return one < other ? `${one}\u0000${other}` : `${other}\u0000${one}`;
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new UserError(`adaptive schedule: ${name} ${value} must be a whole number of at least 1`);
  }
  return value;
}

/** Φ(−z) for z ≥ 0, from the complementary error function (Numerical Recipes' erfcc, relative error < 1.2e-7). */
function normalTail(z: number): number {
  const x = z / Math.SQRT2;
  const t = 1 / (1 + 0.5 * x);
  const erfc =
    t *
    Math.exp(
      -x * x -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return erfc / 2;
}
