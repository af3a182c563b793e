// Bradley–Terry on 10,000 players and 1,000,000 matches (both update rules and the official mode),
// exact standard errors at 1,000 players, and the ring schedule for 10,000 players.
import {
  connectedComponents,
  fitIndexedBradleyTerry,
  indexMatches,
  ringSchedule,
  seededRandom,
  type IndexedMatches,
  type Match,
} from '../src/ranking/index.js';

const PLAYERS = 10_000;
const MATCHES = 1_000_000;
const TIE_RATE = 0.05;
const EXACT_PLAYERS = 1_000;
const EXACT_MATCHES = 100_000;

export async function benchRanking(): Promise<Record<string, unknown>> {
  const random = seededRandom(2024);
  const trueLogStrength = Float64Array.from({ length: PLAYERS }, () => normal(random));
  const ids = Array.from({ length: PLAYERS }, (_, player) => `episode-${String(player).padStart(5, '0')}`);
  const rows = simulate(ids, trueLogStrength, random);

  let started = performance.now();
  const indexed = indexMatches(rows);
  const indexSeconds = seconds(started);

  started = performance.now();
  const fit = fitIndexedBradleyTerry(indexed);
  const fitSeconds = seconds(started);

  started = performance.now();
  const minoriseMaximise = fitIndexedBradleyTerry(indexed, { algorithm: 'minorise-maximise' });
  const minoriseMaximiseSeconds = seconds(started);

  started = performance.now();
  const official = fitIndexedBradleyTerry(indexed, { mode: 'official' });
  const officialSeconds = seconds(started);

  // Exact standard errors are a dense O(players³) factorisation: timed at the default limit of 1,000 players.
  const smallRows: Match[] = [];
  const smallIds = ids.slice(0, EXACT_PLAYERS);
  for (let index = 0; index < EXACT_MATCHES; index++) {
    const a = Math.floor(random() * EXACT_PLAYERS);
    const b = (a + 1 + Math.floor(random() * (EXACT_PLAYERS - 1))) % EXACT_PLAYERS;
    smallRows.push({ a: smallIds[a]!, b: smallIds[b]!, winner: random() < 0.5 ? 'a' : 'b' });
  }
  started = performance.now();
  const exact = fitIndexedBradleyTerry(indexMatches(smallRows));
  const exactSeconds = seconds(started);

  started = performance.now();
  const ring = ringSchedule(ids, { seed: 7 });
  const ringSeconds = seconds(started);
  const ringIndexed = indexPairs(ids, ring);
  const ringComponents = connectedComponents(PLAYERS, ringIndexed.first, ringIndexed.second).count;

  return {
    players: PLAYERS,
    matches: MATCHES,
    bradleyTerry: {
      indexSeconds,
      fitSeconds,
      iterations: fit.iterations,
      converged: fit.converged,
      stderrMethod: fit.stderrMethod,
      spearmanWithTrueStrengths: spearman(
        trueLogStrength,
        Float64Array.from(indexed.players, (id) => fit.scores[id]!),
        indexed.players.map((id) => Number(id.slice('episode-'.length))),
      ),
    },
    minoriseMaximise: {
      fitSeconds: minoriseMaximiseSeconds,
      iterations: minoriseMaximise.iterations,
      converged: minoriseMaximise.converged,
      largestScoreDifferenceFromNewman: Math.max(
        ...indexed.players.map((id) => Math.abs(minoriseMaximise.scores[id]! - fit.scores[id]!)),
      ),
    },
    official: { fitSeconds: officialSeconds, iterations: official.iterations, converged: official.converged },
    exactStandardErrors: {
      players: EXACT_PLAYERS,
      matches: EXACT_MATCHES,
      fitSeconds: exactSeconds,
      stderrMethod: exact.stderrMethod,
    },
    ringSchedule: { seconds: ringSeconds, pairs: ring.length, components: ringComponents },
  };
}

function simulate(ids: string[], logStrength: Float64Array, random: () => number): Match[] {
  const rows: Match[] = new Array(MATCHES);
  for (let index = 0; index < MATCHES; index++) {
    const a = Math.floor(random() * PLAYERS);
    let b = Math.floor(random() * (PLAYERS - 1));
    if (b >= a) b++;
    const draw = random();
    const aWins = 1 / (1 + Math.exp(logStrength[b]! - logStrength[a]!));
    const winner = draw < TIE_RATE ? 'tie' : random() < aWins ? 'a' : 'b';
    rows[index] = { a: ids[a]!, b: ids[b]!, winner };
  }
  return rows;
}

function indexPairs(ids: string[], pairs: Array<{ first: string; second: string }>): IndexedMatches {
  const indexOf = new Map(ids.map((id, index) => [id, index]));
  return {
    players: ids,
    first: Int32Array.from(pairs, (pair) => indexOf.get(pair.first)!),
    second: Int32Array.from(pairs, (pair) => indexOf.get(pair.second)!),
    firstScore: new Float64Array(pairs.length).fill(0.5),
  };
}

/** Spearman's ρ between true strengths (by player number) and fitted scores. */
function spearman(truth: Float64Array, fitted: Float64Array, playerOf: number[]): number {
  const truthRank = ranks(Float64Array.from(playerOf, (player) => truth[player]!));
  const fittedRank = ranks(fitted);
  let sum = 0;
  for (let index = 0; index < fitted.length; index++) sum += (truthRank[index]! - fittedRank[index]!) ** 2;
  const count = fitted.length;
  return 1 - (6 * sum) / (count * (count * count - 1));
}

function ranks(values: Float64Array): Float64Array {
  const order = Array.from(values, (_, index) => index).sort((left, right) => values[left]! - values[right]!);
  const result = new Float64Array(values.length);
  order.forEach((index, rank) => (result[index] = rank));
  return result;
}

function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function seconds(started: number): number {
  return Math.round(performance.now() - started) / 1000;
}
