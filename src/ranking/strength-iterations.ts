import { ComponentShift } from './component-shift.js';
import type { IndexedMatches } from './matches.js';

/**
 * The iterations behind the Bradley–Terry fit, over typed arrays: O(matches + players) work per
 * iteration and no allocation inside the loop. p_i is player i's strength, W_i its wins (a tie
 * counts half a win for each side), and the prior gives every player `prior` virtual wins and
 * `prior` virtual losses against a fixed virtual player of strength 1.
 *
 * Mode `map`, the maximum a posteriori, by one of two updates with the same fixed point:
 * - `newman` (default): Newman's (2023, eq. 26) iteration
 *     p_i ← (prior/(p_i + 1) + Σ_j w_ij p_j/(p_i + p_j)) / (prior/(p_i + 1) + Σ_j w_ji/(p_i + p_j)),
 *   typically tens of times fewer steps than MM. It is applied player by player, each update using the
 *   opponents' newest strengths: updated all at once, two players who mostly meet each other swap
 *   their strengths every step (p_0 ← r·p_1, p_1 ← p_0/r), and only the weak prior damps that
 *   oscillation (about 4,000 steps for two players and 192 games). Should it stall (its residual not
 *   improving for 100 steps) the fit continues with MM.
 * - `minorise-maximise`: Hunter's (2004) MM update
 *     p_i ← (W_i + prior) / (Σ_matches 1/(p_i + p_j) + 2·prior/(p_i + 1)),
 *   each step guaranteed not to lower the posterior.
 * Either is followed by the exact optimum of each connected group's common scale (component-shift.ts).
 * Converged means the largest gradient of the log-posterior in log-strength, per game played
 * (virtual games included), is below `tolerance`: a property of the point, not of the step size;
 * the log-posterior is strictly concave, so that point is the maximum. With `prior` 0 the fit is plain
 * maximum likelihood (the caller checks that it exists) and log-strengths are centred to mean 0
 * after every step, the model being invariant to scale.
 *
 * Mode `official`: the official code's update as described in issue 6, a compatibility mode. It adds
 * `prior` wins over only `prior` virtual games,
 *     p_i ← (W_i + prior) / (Σ_matches 1/(p_i + p_j) + prior/(p_i + 1)),
 * then rescales all strengths to mean 1 after every step. That amounts to `prior` virtual wins and
 * no virtual loss, so its fixed point is not the maximum of the posterior it describes: players with
 * few games are pulled up against those with many, and a player who never lost runs far ahead,
 * held only by the rescaling, which in turn drags every other score down; with few players nothing holds it and the update diverges
 * (then it stops at the cap or where a strength leaves the floating-point range, not converged). Converged here means the
 * largest change of a log-strength in one step is below `tolerance`.
 */
export type FitMode = 'map' | 'official';
export type FitAlgorithm = 'newman' | 'minorise-maximise';

interface IterationOptions {
  prior: number;
  mode: FitMode;
  algorithm: FitAlgorithm;
  tolerance: number;
  maxIterations: number;
}

export interface IterationResult {
  logStrength: Float64Array;
  iterations: number;
  converged: boolean;
  /** The quantity compared with the tolerance at the last iteration. */
  residual: number;
}

const STALL_LIMIT = 100;

export function iterateStrengths(matches: IndexedMatches, options: IterationOptions): IterationResult {
  const playerCount = matches.players.length;
  const { first, second, firstScore } = matches;
  const matchCount = first.length;
  const { prior, tolerance, maxIterations } = options;
  const official = options.mode === 'official';

  const winsWithPrior = new Float64Array(playerCount).fill(prior);
  const gamesWithPrior = new Float64Array(playerCount).fill(2 * prior);
  for (let index = 0; index < matchCount; index++) {
    const score = firstScore[index]!;
    winsWithPrior[first[index]!]! += score;
    winsWithPrior[second[index]!]! += 1 - score;
    gamesWithPrior[first[index]!]!++;
    gamesWithPrior[second[index]!]!++;
  }

  const strength = new Float64Array(playerCount).fill(1);
  // Newman: expected wins gained (numerator) and losses (denominator); MM: Σ 1/(p_i + p_j) in `losses`.
  const gains = new Float64Array(playerCount);
  const losses = new Float64Array(playerCount);
  const shift = official || prior === 0 ? undefined : new ComponentShift(matches);
  let newman = !official && options.algorithm === 'newman';
  let opponents: OpponentLists | undefined;
  let bestResidual = Infinity;
  let sinceBest = 0;
  let iterations = 0;
  let converged = false;
  let residual = Infinity;

  while (iterations < maxIterations) {
    iterations++;
    residual = 0;
    gains.fill(0);
    losses.fill(0);
    if (newman) {
      const games = opponents ?? (opponents = opponentLists(matches));
      for (let player = 0; player < playerCount; player++) {
        const current = strength[player]!;
        const virtual = prior / (current + 1);
        let gain = virtual;
        let loss = virtual;
        for (let edge = games.start[player]!; edge < games.start[player + 1]!; edge++) {
          const opponent = strength[games.opponent[edge]!]!;
          const score = games.score[edge]!;
          const share = 1 / (current + opponent);
          gain += score * opponent * share;
          loss += (1 - score) * share;
        }
        // gain − p_i·loss is ∂(log-posterior)/∂(log p_i) where p_i is about to move.
        residual = Math.max(residual, Math.abs(gain - current * loss) / gamesWithPrior[player]!);
        strength[player] = gain / loss;
      }
    } else {
      for (let index = 0; index < matchCount; index++) {
        const left = first[index]!;
        const right = second[index]!;
        const share = 1 / (strength[left]! + strength[right]!);
        losses[left]! += share;
        losses[right]! += share;
      }
      if (official) {
        let total = 0;
        for (let player = 0; player < playerCount; player++) {
          gains[player] = winsWithPrior[player]! / (losses[player]! + prior / (strength[player]! + 1));
          total += gains[player]!;
        }
        const scale = playerCount / total;
        let finite = true;
        for (let player = 0; player < playerCount; player++) {
          const step = Math.abs(Math.log((gains[player]! * scale) / strength[player]!));
          finite &&= Number.isFinite(step);
          residual = Math.max(residual, step);
        }
        // The official update can diverge (a player who never lost runs off; everyone else sinks to 0):
        // stop at the last representable point and report it as not converged.
        if (!finite) {
          residual = Infinity;
          break;
        }
        for (let player = 0; player < playerCount; player++) strength[player] = gains[player]! * scale;
      } else {
        for (let player = 0; player < playerCount; player++) {
          const current = strength[player]!;
          const games = losses[player]! + (2 * prior) / (current + 1);
          // W_i + prior − p_i·games is ∂(log-posterior)/∂(log p_i) at the current point.
          residual = Math.max(
            residual,
            Math.abs(winsWithPrior[player]! - current * games) / gamesWithPrior[player]!,
          );
          strength[player] = winsWithPrior[player]! / games;
        }
      }
    }
    if (!official) {
      if (shift) shift.apply(strength);
      else centreLogStrengths(strength);
    }
    // A player-by-player sweep measures each gradient at a point that moved on during the sweep:
    // convergence is confirmed at the final point itself.
    if (residual < tolerance && newman)
      residual = logPosteriorGradient(matches, strength, prior, gamesWithPrior);
    if (residual < tolerance) {
      converged = true;
      break;
    }
    if (residual < bestResidual) {
      bestResidual = residual;
      sinceBest = 0;
    } else if (newman && ++sinceBest >= STALL_LIMIT) {
      newman = false;
    }
  }

  const logStrength = new Float64Array(playerCount);
  for (let player = 0; player < playerCount; player++) logStrength[player] = Math.log(strength[player]!);
  return { logStrength, iterations, converged, residual };
}

function centreLogStrengths(strength: Float64Array): void {
  let sum = 0;
  for (let player = 0; player < strength.length; player++) sum += Math.log(strength[player]!);
  const scale = Math.exp(-sum / strength.length);
  for (let player = 0; player < strength.length; player++) strength[player]! *= scale;
}

/** Each player's games, grouped by player: the opponents' indices and the player's score in each game. */
interface OpponentLists {
  /** Player i's games are entries start[i] .. start[i + 1] − 1. */
  start: Int32Array;
  opponent: Int32Array;
  score: Float64Array;
}

function opponentLists(matches: IndexedMatches): OpponentLists {
  const { first, second, firstScore } = matches;
  const start = new Int32Array(matches.players.length + 1);
  for (let index = 0; index < first.length; index++) {
    start[first[index]! + 1]!++;
    start[second[index]! + 1]!++;
  }
  for (let player = 0; player < matches.players.length; player++) start[player + 1]! += start[player]!;
  const next = start.slice(0, matches.players.length);
  const opponent = new Int32Array(2 * first.length);
  const score = new Float64Array(2 * first.length);
  for (let index = 0; index < first.length; index++) {
    const left = first[index]!;
    const right = second[index]!;
    opponent[next[left]!] = right;
    score[next[left]!++] = firstScore[index]!;
    opponent[next[right]!] = left;
    score[next[right]!++] = 1 - firstScore[index]!;
  }
  return { start, opponent, score };
}

/** The largest |∂(log-posterior)/∂(log p_i)| per game played (virtual games included), at one point. */
function logPosteriorGradient(
  matches: IndexedMatches,
  strength: Float64Array,
  prior: number,
  gamesWithPrior: Float64Array,
): number {
  const { first, second, firstScore } = matches;
  const gradient = new Float64Array(strength.length);
  for (let player = 0; player < strength.length; player++) {
    gradient[player] = prior * (1 - (2 * strength[player]!) / (strength[player]! + 1));
  }
  for (let index = 0; index < first.length; index++) {
    const left = first[index]!;
    const right = second[index]!;
    const expectedFirst = strength[left]! / (strength[left]! + strength[right]!);
    gradient[left]! += firstScore[index]! - expectedFirst;
    gradient[right]! += expectedFirst - firstScore[index]!;
  }
  let largest = 0;
  for (let player = 0; player < strength.length; player++) {
    largest = Math.max(largest, Math.abs(gradient[player]!) / gamesWithPrior[player]!);
  }
  return largest;
}
