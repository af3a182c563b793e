import type { Match } from '../../src/ranking/index.js';
import type { Pair } from '../../src/ranking/index.js';

/**
 * An independent maximum-a-posteriori fit for checking the library: Newton's method with step
 * halving on the log-posterior written out directly, dense linear algebra, no shared code.
 * Log-posterior: Σ_matches [s·log σ(θa − θb) + (1 − s)·log σ(θb − θa)] + prior·Σ_i [log σ(θ_i) + log σ(−θ_i)].
 * With prior 0 the first player is pinned at 0 while solving and the result is centred to mean 0.
 */
export function newtonMap(
  players: readonly string[],
  matches: readonly Match[],
  prior: number,
): { scores: Record<string, number>; stderr: Record<string, number> } {
  const count = players.length;
  const indexOf = new Map(players.map((id, index) => [id, index]));
  const games = matches.map((match) => ({
    a: indexOf.get(match.a)!,
    b: indexOf.get(match.b)!,
    s: match.winner === 'a' ? 1 : match.winner === 'b' ? 0 : 0.5,
  }));
  const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));
  const logSigmoid = (x: number): number =>
    x >= 0 ? -Math.log1p(Math.exp(-x)) : x - Math.log1p(Math.exp(x));
  const logPosterior = (theta: number[]): number => {
    let total = 0;
    for (const { a, b, s } of games) {
      total += s * logSigmoid(theta[a]! - theta[b]!) + (1 - s) * logSigmoid(theta[b]! - theta[a]!);
    }
    for (const value of theta) total += prior * (logSigmoid(value) + logSigmoid(-value));
    return total;
  };
  const derivatives = (theta: number[]): { gradient: number[]; hessian: number[][] } => {
    const gradient = new Array<number>(count).fill(0);
    const hessian = Array.from({ length: count }, () => new Array<number>(count).fill(0));
    for (const { a, b, s } of games) {
      const probability = sigmoid(theta[a]! - theta[b]!);
      gradient[a]! += s - probability;
      gradient[b]! -= s - probability;
      const weight = probability * (1 - probability);
      hessian[a]![a]! += weight;
      hessian[b]![b]! += weight;
      hessian[a]![b]! -= weight;
      hessian[b]![a]! -= weight;
    }
    theta.forEach((value, index) => {
      gradient[index]! += prior * (1 - 2 * sigmoid(value));
      hessian[index]![index]! += 2 * prior * sigmoid(value) * (1 - sigmoid(value));
    });
    return { gradient, hessian };
  };
  const free = prior === 0 ? players.map((_, index) => index).slice(1) : players.map((_, index) => index);

  let theta = new Array<number>(count).fill(0);
  for (let step = 0; step < 200; step++) {
    const { gradient, hessian } = derivatives(theta);
    const direction = solve(
      free.map((row) => free.map((column) => hessian[row]![column]!)),
      free.map((row) => gradient[row]!),
    );
    if (Math.max(...direction.map(Math.abs)) < 1e-14) break;
    let length = 1;
    const before = logPosterior(theta);
    for (;;) {
      const candidate = [...theta];
      free.forEach((index, position) => (candidate[index]! += length * direction[position]!));
      if (logPosterior(candidate) >= before - 1e-12 || length < 1e-8) {
        theta = candidate;
        break;
      }
      length /= 2;
    }
  }
  if (prior === 0) {
    const mean = theta.reduce((sum, value) => sum + value, 0) / count;
    theta = theta.map((value) => value - mean);
  }

  const { hessian } = derivatives(theta);
  let variance: number[];
  if (prior === 0) {
    // Covariance of the centred estimate: pin player 0, invert, then centre the covariance.
    const reduced = invert(free.map((row) => free.map((column) => hessian[row]![column]!)));
    const pinned = Array.from({ length: count }, (_, row) =>
      Array.from({ length: count }, (_, column) =>
        row === 0 || column === 0 ? 0 : reduced[row - 1]![column - 1]!,
      ),
    );
    const rowMeans = pinned.map((row) => row.reduce((sum, value) => sum + value, 0) / count);
    const grandMean = rowMeans.reduce((sum, value) => sum + value, 0) / count;
    variance = pinned.map((row, index) => row[index]! - 2 * rowMeans[index]! + grandMean);
  } else {
    const inverse = invert(hessian);
    variance = inverse.map((row, index) => row[index]!);
  }
  return {
    scores: Object.fromEntries(players.map((id, index) => [id, theta[index]!])),
    stderr: Object.fromEntries(players.map((id, index) => [id, Math.sqrt(variance[index]!)])),
  };
}

/** Gaussian elimination with partial pivoting. */
function solve(matrix: number[][], vector: number[]): number[] {
  const size = vector.length;
  const rows = matrix.map((row, index) => [...row, vector[index]!]);
  for (let column = 0; column < size; column++) {
    let pivot = column;
    for (let row = column + 1; row < size; row++) {
      if (Math.abs(rows[row]![column]!) > Math.abs(rows[pivot]![column]!)) pivot = row;
    }
    [rows[column], rows[pivot]] = [rows[pivot]!, rows[column]!];
    for (let row = column + 1; row < size; row++) {
      const factor = rows[row]![column]! / rows[column]![column]!;
      for (let inner = column; inner <= size; inner++) rows[row]![inner]! -= factor * rows[column]![inner]!;
    }
  }
  const result = new Array<number>(size).fill(0);
  for (let row = size - 1; row >= 0; row--) {
    let value = rows[row]![size]!;
    for (let inner = row + 1; inner < size; inner++) value -= rows[row]![inner]! * result[inner]!;
    result[row] = value / rows[row]![row]!;
  }
  return result;
}

function invert(matrix: number[][]): number[][] {
  const size = matrix.length;
  const columns = Array.from({ length: size }, (_, column) =>
    solve(
      matrix,
      Array.from({ length: size }, (_, row) => (row === column ? 1 : 0)),
    ),
  );
  return Array.from({ length: size }, (_, row) => columns.map((column) => column[row]!));
}

/** Judgments drawn from Bradley–Terry with the given log-strengths; `tieRate` of them are ties. */
export function simulateMatches(
  trueScores: Record<string, number>,
  pairs: readonly Pair[],
  random: () => number,
  options: { repetitions?: number; tieRate?: number } = {},
): Match[] {
  const matches: Match[] = [];
  for (let repetition = 0; repetition < (options.repetitions ?? 1); repetition++) {
    for (const { first, second } of pairs) {
      const firstWins = 1 / (1 + Math.exp(trueScores[second]! - trueScores[first]!));
      const winner = random() < (options.tieRate ?? 0) ? 'tie' : random() < firstWins ? 'a' : 'b';
      matches.push({ a: first, b: second, winner });
    }
  }
  return matches;
}

/** Spearman's rank correlation of two scorings over the same ids (no ties expected). */
export function spearman(left: Record<string, number>, right: Record<string, number>): number {
  const ids = Object.keys(left);
  const rankOf = (scores: Record<string, number>): Map<string, number> =>
    new Map([...ids].sort((one, other) => scores[one]! - scores[other]!).map((id, rank) => [id, rank]));
  const leftRank = rankOf(left);
  const rightRank = rankOf(right);
  const squared = ids.reduce((sum, id) => sum + (leftRank.get(id)! - rightRank.get(id)!) ** 2, 0);
  return 1 - (6 * squared) / (ids.length * (ids.length ** 2 - 1));
}

/** Number of connected components of the graph the pairs draw over `players`. */
export function componentCount(
  players: readonly string[],
  pairs: ReadonlyArray<{ first: string; second: string }>,
): number {
  const neighbours = new Map(players.map((id) => [id, [] as string[]]));
  for (const { first, second } of pairs) {
    neighbours.get(first)!.push(second);
    neighbours.get(second)!.push(first);
  }
  const seen = new Set<string>();
  let count = 0;
  for (const start of players) {
    if (seen.has(start)) continue;
    count++;
    const stack = [start];
    seen.add(start);
    while (stack.length > 0) {
      for (const next of neighbours.get(stack.pop()!)!) {
        if (!seen.has(next)) {
          seen.add(next);
          stack.push(next);
        }
      }
    }
  }
  return count;
}

export function ids(count: number, prefix = 'episode-'): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}${String(index + 1).padStart(2, '0')}`);
}
