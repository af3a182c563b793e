import { UserError } from '../errors.js';
import type { IndexedMatches } from './matches.js';

/**
 * Component label per player of the undirected graph "played each other"; labels are 0, 1, … in
 * order of each component's lowest player index.
 */
export function connectedComponents(
  playerCount: number,
  first: Int32Array,
  second: Int32Array,
): { count: number; component: Int32Array } {
  const parent = new Int32Array(playerCount);
  for (let player = 0; player < playerCount; player++) parent[player] = player;
  const find = (player: number): number => {
    let root = player;
    while (parent[root] !== root) root = parent[root]!;
    while (parent[player] !== root) {
      const next = parent[player]!;
      parent[player] = root;
      player = next;
    }
    return root;
  };
  for (let index = 0; index < first.length; index++) {
    const left = find(first[index]!);
    const right = find(second[index]!);
    if (left !== right) parent[Math.max(left, right)] = Math.min(left, right);
  }
  const component = new Int32Array(playerCount).fill(-1);
  let count = 0;
  for (let player = 0; player < playerCount; player++) {
    const root = find(player);
    if (component[root] === -1) component[root] = count++;
    component[player] = component[root]!;
  }
  return { count, component };
}

/**
 * Without a prior the maximum-likelihood strengths exist only when, for every split of the players
 * into two groups, each group scored (won or tied) at least once against the other (Ford 1957;
 * Hunter 2004, assumption 1). Otherwise some strength runs off to 0 or infinity: this says which.
 */
export function assertMaximumLikelihoodExists(matches: IndexedMatches): void {
  const { players, first, second, firstScore } = matches;
  const playerCount = players.length;
  const components = connectedComponents(playerCount, first, second);
  if (components.count > 1) {
    const groups = groupsOf(components.component, components.count, players);
    throw new UserError(
      `the matches split the players into ${components.count} groups that never met (${groups}); ` +
        'strengths in different groups cannot be compared without a prior: use a prior above 0 (e.g. --prior 0.5) or add matches between the groups',
    );
  }
  // Directed edge u → v when u scored against v; the estimate exists iff this graph is strongly connected.
  const outDegree = new Int32Array(playerCount + 1);
  const inDegree = new Int32Array(playerCount + 1);
  const eachEdge = (visit: (from: number, to: number) => void): void => {
    for (let index = 0; index < first.length; index++) {
      const score = firstScore[index]!;
      if (score > 0) visit(first[index]!, second[index]!);
      if (score < 1) visit(second[index]!, first[index]!);
    }
  };
  eachEdge((from, to) => {
    outDegree[from + 1]!++;
    inDegree[to + 1]!++;
  });
  const forward = adjacency(playerCount, outDegree, eachEdge, false);
  const backward = adjacency(playerCount, inDegree, eachEdge, true);
  const fromStart = reachable(0, forward);
  const toStart = reachable(0, backward);
  if (fromStart.every(Boolean) && toStart.every(Boolean)) return;

  const neverScored = players.filter((_, player) => outDegree[player + 1] === 0);
  if (neverScored.length > 0) {
    throw new UserError(
      `${listIds(neverScored)} never won or tied a match, so ${neverScored.length === 1 ? 'its' : 'their'} maximum-likelihood strength is 0 (log-strength −∞): use a prior above 0 (e.g. --prior 0.5)`,
    );
  }
  const neverLost = players.filter((_, player) => inDegree[player + 1] === 0);
  if (neverLost.length > 0) {
    throw new UserError(
      `${listIds(neverLost)} never lost or tied a match, so ${neverLost.length === 1 ? 'its' : 'their'} maximum-likelihood strength is infinite: use a prior above 0 (e.g. --prior 0.5)`,
    );
  }
  // Players that player 0 cannot reach never lost to the rest; players that cannot reach player 0 never beat it.
  const unreachable = fromStart.some((seen) => !seen);
  const winners = players.filter((_, player) => (unreachable ? !fromStart[player] : toStart[player]));
  const losers = players.filter((_, player) => (unreachable ? fromStart[player] : !toStart[player]));
  throw new UserError(
    `the players ${listIds(winners)} won every match they played against ${listIds(losers)}, so the maximum-likelihood strengths do not exist: use a prior above 0 (e.g. --prior 0.5) or add matches between them`,
  );
}

interface Adjacency {
  start: Int32Array;
  target: Int32Array;
}

function adjacency(
  playerCount: number,
  degreeShifted: Int32Array,
  eachEdge: (visit: (from: number, to: number) => void) => void,
  reversed: boolean,
): Adjacency {
  const start = new Int32Array(playerCount + 1);
  for (let player = 0; player < playerCount; player++)
    start[player + 1] = start[player]! + degreeShifted[player + 1]!;
  const cursor = start.slice(0, playerCount);
  const target = new Int32Array(start[playerCount]!);
  eachEdge((from, to) => {
    const [source, destination] = reversed ? [to, from] : [from, to];
    target[cursor[source]!++] = destination;
  });
  return { start, target };
}

function reachable(origin: number, graph: Adjacency): boolean[] {
  const seen = new Array<boolean>(graph.start.length - 1).fill(false);
  const stack = [origin];
  seen[origin] = true;
  while (stack.length > 0) {
    const player = stack.pop()!;
    for (let edge = graph.start[player]!; edge < graph.start[player + 1]!; edge++) {
      const next = graph.target[edge]!;
      if (!seen[next]) {
        seen[next] = true;
        stack.push(next);
      }
    }
  }
  return seen;
}

function groupsOf(component: Int32Array, count: number, players: readonly string[]): string {
  const groups: string[][] = Array.from({ length: count }, () => []);
  players.forEach((id, player) => groups[component[player]!]!.push(id));
  const shown = groups.slice(0, 3).map((group) => `{${listIds(group)}}`);
  if (count > 3) shown.push(`${count - 3} more`);
  return shown.join(', ');
}

function listIds(ids: readonly string[]): string {
  const shown = ids.slice(0, 5).join(', ');
  return ids.length > 5 ? `${shown} and ${ids.length - 5} more` : shown;
}
