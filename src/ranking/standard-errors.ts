import type { IndexedMatches } from './matches.js';

/**
 * Standard errors of the log-strengths from the observed Fisher information: the Hessian H of the
 * negative log-posterior in log-strength at the fitted point,
 *
 *     H_ii = Σ_matches p_i p_j/(p_i + p_j)² + 2·prior·p_i/(p_i + 1)²,   H_ij = −Σ_matches(i,j) p_i p_j/(p_i + p_j)²
 *
 * (a tie carries the same information as a decided match). `inverse-hessian`: sqrt of the diagonal
 * of H⁻¹ by a dense Cholesky factorisation, O(players³), used up to a player limit. With prior 0,
 * H is a graph Laplacian, singular along "all strengths times a constant"; the errors are then those
 * of the log-strengths centred to mean 0, from the pseudo-inverse (H + 11ᵀ/n)⁻¹ − 11ᵀ/n.
 * `diagonal-hessian`: 1/sqrt(H_ii), O(matches), for large fits; with a prior it is a lower bound
 * on the full-inverse error (each player's own information, as if every opponent were known exactly).
 * When the Hessian is numerically singular the scores are not determined (only a diverged official
 * update gets here) and every standard error is Infinity (null in JSON).
 */
export type StandardErrorMethod = 'inverse-hessian' | 'diagonal-hessian';

export function standardErrors(
  matches: IndexedMatches,
  logStrength: Float64Array,
  prior: number,
  method: StandardErrorMethod,
): { errors: Float64Array; method: StandardErrorMethod } {
  const playerCount = logStrength.length;
  const { first, second } = matches;
  // p_i p_j/(p_i + p_j)² = σ(θ_i − θ_j)·σ(θ_j − θ_i), computed from the difference so it cannot underflow.
  const information = (difference: number): number => {
    const share = 1 / (1 + Math.exp(-difference));
    return share * (1 - share);
  };
  const diagonal = new Float64Array(playerCount);
  for (let player = 0; player < playerCount; player++) {
    diagonal[player] = 2 * prior * information(logStrength[player]!);
  }

  if (method === 'diagonal-hessian') {
    for (let index = 0; index < first.length; index++) {
      const weight = information(logStrength[first[index]!]! - logStrength[second[index]!]!);
      diagonal[first[index]!]! += weight;
      diagonal[second[index]!]! += weight;
    }
    return { errors: diagonal.map((value) => 1 / Math.sqrt(value)), method };
  }

  const hessian = new Float64Array(playerCount * playerCount);
  const pseudoInverseShift = prior === 0 ? 1 / playerCount : 0;
  if (pseudoInverseShift > 0) hessian.fill(pseudoInverseShift);
  for (let player = 0; player < playerCount; player++) {
    hessian[player * playerCount + player]! += diagonal[player]!;
  }
  for (let index = 0; index < first.length; index++) {
    const left = first[index]!;
    const right = second[index]!;
    const weight = information(logStrength[left]! - logStrength[right]!);
    hessian[left * playerCount + left]! += weight;
    hessian[right * playerCount + right]! += weight;
    hessian[left * playerCount + right]! -= weight;
    hessian[right * playerCount + left]! -= weight;
  }
  if (!choleskyInPlace(hessian, playerCount))
    return { errors: new Float64Array(playerCount).fill(Infinity), method };
  const variance = inverseDiagonal(hessian, playerCount);
  return {
    errors: variance.map((value) => Math.sqrt(Math.max(0, value - pseudoInverseShift))),
    method,
  };
}

/** Lower-triangular L with L·Lᵀ = the matrix, written over its lower triangle (row-major); false if not positive definite. */
function choleskyInPlace(matrix: Float64Array, size: number): boolean {
  for (let column = 0; column < size; column++) {
    const columnRow = column * size;
    let pivot = matrix[columnRow + column]!;
    for (let inner = 0; inner < column; inner++) pivot -= matrix[columnRow + inner]! ** 2;
    if (!(pivot > 0)) return false;
    const root = Math.sqrt(pivot);
    matrix[columnRow + column] = root;
    for (let row = column + 1; row < size; row++) {
      const rowStart = row * size;
      let value = matrix[rowStart + column]!;
      for (let inner = 0; inner < column; inner++)
        value -= matrix[rowStart + inner]! * matrix[columnRow + inner]!;
      matrix[rowStart + column] = value / root;
    }
  }
  return true;
}

/** diag((L·Lᵀ)⁻¹): the squared norm of each column of L⁻¹, one triangular solve per column. */
function inverseDiagonal(lower: Float64Array, size: number): Float64Array {
  const result = new Float64Array(size);
  const column = new Float64Array(size);
  for (let target = 0; target < size; target++) {
    let squaredNorm = 0;
    for (let row = target; row < size; row++) {
      const rowStart = row * size;
      let value = row === target ? 1 : 0;
      for (let inner = target; inner < row; inner++) value -= lower[rowStart + inner]! * column[inner]!;
      value /= lower[rowStart + row]!;
      column[row] = value;
      squaredNorm += value * value;
    }
    result[target] = squaredNorm;
  }
  return result;
}
