import { connectedComponents } from './connectivity.js';
import type { IndexedMatches } from './matches.js';

/**
 * The likelihood does not change when every strength of a connected group of players is multiplied
 * by one factor; only the weak prior pins that factor, so the plain fixed-point iterations creep
 * along this direction at a rate of about prior/games per step (thousands of steps for hundreds of
 * games per player). After each step the factor of each group is set to its exact optimum, where
 * Σ_group p/(p + 1) = |group|/2 (the prior's virtual wins and losses balance). It maximises the
 * posterior along that direction, so it cannot lower it and does not move the fixed point.
 */
export class ComponentShift {
  private readonly component: Int32Array;
  private readonly size: Float64Array;
  private readonly logScale: Float64Array;
  private readonly imbalance: Float64Array;
  private readonly slope: Float64Array;

  constructor(matches: IndexedMatches) {
    const { count, component } = connectedComponents(matches.players.length, matches.first, matches.second);
    this.component = component;
    this.size = new Float64Array(count);
    for (const label of component) this.size[label]!++;
    this.logScale = new Float64Array(count);
    this.imbalance = new Float64Array(count);
    this.slope = new Float64Array(count);
  }

  apply(strength: Float64Array): void {
    const { component, size, logScale, imbalance, slope } = this;
    logScale.fill(0);
    for (let step = 0; step < 50; step++) {
      imbalance.fill(0);
      slope.fill(0);
      for (let player = 0; player < strength.length; player++) {
        const label = component[player]!;
        const scaled = strength[player]! * Math.exp(logScale[label]!);
        const share = scaled / (scaled + 1);
        imbalance[label]! += share;
        slope[label]! += share * (1 - share);
      }
      let largest = 0;
      for (let label = 0; label < size.length; label++) {
        const excess = imbalance[label]! - size[label]! / 2;
        largest = Math.max(largest, Math.abs(excess) / size[label]!);
        // Newton on a monotone sum of logistic curves; the bounded step cannot overshoot far.
        logScale[label]! -= Math.max(-1, Math.min(1, excess / Math.max(slope[label]!, 1e-300)));
      }
      if (largest < 1e-14) break;
    }
    for (let player = 0; player < strength.length; player++) {
      strength[player]! *= Math.exp(logScale[component[player]!]!);
    }
  }
}
