/**
 * The search stabiliser, the "learning-rate scheduler" the paper asks for: iteration `i` (1-based) may change at most
 * `initialMaxChange · decay^(i-1)` of the design, so early iterations explore and later ones refine. Off when not
 * configured; its effect is measurable by comparing searches with and without it.
 */
export interface Stabiliser {
  initialMaxChange: number;
  decay: number;
}

export function maxChangeFraction(stabiliser: Stabiliser | undefined, iteration: number): number | undefined {
  if (!stabiliser) return undefined;
  if (!Number.isInteger(iteration) || iteration < 1) {
    throw new RangeError(`iterations are counted from 1, not ${iteration}`);
  }
  return stabiliser.initialMaxChange * stabiliser.decay ** (iteration - 1);
}
