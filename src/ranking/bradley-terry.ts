import { UserError } from '../errors.js';
import { assertMaximumLikelihoodExists } from './connectivity.js';
import { compareIds, indexMatches, type IndexedMatches, type Match } from './matches.js';
import { iterateStrengths, type FitAlgorithm, type FitMode } from './strength-iterations.js';
import { standardErrors, type StandardErrorMethod } from './standard-errors.js';

/**
 * Bradley–Terry: P(i beats j) = p_i / (p_i + p_j), reported as log-strength θ_i = log p_i.
 *
 * The default fit is the maximum a posteriori under a weak prior: each player has `prior` virtual
 * wins and `prior` virtual losses against a fixed virtual player of strength 1 (θ = 0). The
 * virtual player is what makes the fit well defined for every input: a player who never won gets a
 * finite, low score instead of −∞, a player who never played stays at 0, and groups of players who
 * never met each other are still placed on one scale, each group anchored to the virtual player
 * (their relative placement then rests on the prior alone, and their standard errors say so).
 * With `prior` 0 the fit is plain maximum likelihood, scores are centred to mean 0, and inputs for
 * which it does not exist (disconnected matches, a player who never won or never lost) are refused
 * with a message saying why.
 *
 * Standard errors: see standard-errors.ts. In `official` mode they are those of the described
 * prior's posterior evaluated at the official estimates (the official update has no posterior of
 * its own), a rough guide only.
 */
export interface BradleyTerryOptions {
  /** Virtual wins and, as many, virtual losses per player against the strength-1 player. Default 0.5. */
  prior?: number;
  /** `map` (default): the fit described above. `official`: the official code's update, for comparison (see strength-iterations.ts). */
  mode?: FitMode;
  /** Update rule of the `map` fit: `newman` (default) or `minorise-maximise`; same result, different speed. */
  algorithm?: FitAlgorithm;
  /** Convergence threshold (see strength-iterations.ts). Default 1e-10. */
  tolerance?: number;
  /** Iteration cap; `converged` is false when it is reached first. Default 10,000. */
  maxIterations?: number;
  /** Ids to score even if they have no match (they get the prior's score, 0). */
  players?: readonly string[];
  /** Standard errors from the full inverse Hessian up to this many players, the diagonal above. Default 1,000. */
  exactStandardErrorsUpTo?: number;
}

export interface BradleyTerryFit {
  /** Log-strength per player. */
  scores: Record<string, number>;
  /** Standard error of each score (see `stderrMethod`). */
  stderr: Record<string, number>;
  /** Ids, best first; equal scores (to 1e-9) in id order. */
  ranking: string[];
  iterations: number;
  converged: boolean;
  mode: FitMode;
  prior: number;
  stderrMethod: StandardErrorMethod;
}

export function fitBradleyTerry(
  matches: readonly Match[],
  options: BradleyTerryOptions = {},
): BradleyTerryFit {
  return fitIndexedBradleyTerry(indexMatches(matches, options.players), options);
}

/** The same fit over matches already indexed (large inputs skip the per-row objects). */
export function fitIndexedBradleyTerry(
  matches: IndexedMatches,
  options: BradleyTerryOptions = {},
): BradleyTerryFit {
  const prior = options.prior ?? 0.5;
  const mode = options.mode ?? 'map';
  if (!Number.isFinite(prior) || prior < 0) {
    throw new UserError(`prior ${prior}: use a non-negative number of virtual wins and losses, e.g. 0.5`);
  }
  if (matches.players.length === 0) throw new UserError('no players to rank: give at least one match');
  if (prior === 0) assertMaximumLikelihoodExists(matches);

  const { logStrength, iterations, converged } = iterateStrengths(matches, {
    prior,
    mode,
    algorithm: options.algorithm ?? 'newman',
    tolerance: options.tolerance ?? 1e-10,
    maxIterations: options.maxIterations ?? 10_000,
  });
  const { errors, method: stderrMethod } = standardErrors(
    matches,
    logStrength,
    prior,
    matches.players.length <= (options.exactStandardErrorsUpTo ?? 1000)
      ? 'inverse-hessian'
      : 'diagonal-hessian',
  );

  // fromEntries defines own properties, so even an id such as "__proto__" is an ordinary key.
  return {
    scores: Object.fromEntries(matches.players.map((id, player) => [id, logStrength[player]!])),
    stderr: Object.fromEntries(matches.players.map((id, player) => [id, errors[player]!])),
    ranking: rankByScore(matches.players, logStrength),
    iterations,
    converged,
    mode,
    prior,
    stderrMethod,
  };
}

/** Best first. Scores are compared rounded to 1e-9, so rounding noise never decides between equals; then by id. */
export function rankByScore(players: readonly string[], logStrength: ArrayLike<number>): string[] {
  const key = Array.from(players, (_, player) => Math.round(logStrength[player]! * 1e9));
  return players
    .map((_, player) => player)
    .sort((left, right) => key[right]! - key[left]! || compareIds(players[left]!, players[right]!))
    .map((player) => players[player]!);
}
