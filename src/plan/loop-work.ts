import type { JudgeOrders } from '../config/judge-orders.js';
import type { RunConfig } from '../config/run-config.js';
import { ringSchedule, roundRobinSchedule } from '../ranking/schedules.js';
import { addCounts, exactly, scaleCount, type StageWork, type WorkCount } from './plan-types.js';

/** Judge calls a judgment makes before repairs: both A/B orders are two calls. */
export function callsPerJudgment(orders: JudgeOrders | 'official'): number {
  return orders === 'both' ? 2 : 1;
}

/**
 * One generation's search over `tasks` tasks, as `searchTask` runs it: the reference and v0, then per iteration one
 * optimizer call and one episode; each version is judged once against the champion (`paper`), or against the reference
 * and, when it wins while another version holds the title, once more (`official`: up to two). With `search.repeats: k`
 * the reference is rerun k times and every two of its k + 1 runs judged; each promoted design likewise, plus its
 * promotion replayed on the k reruns: the count assumes no promotion, the most every version promoted.
 */
export function searchWork(config: RunConfig, tasks: number, generation: string): StageWork {
  const { iterations, championRule, judgeMode, repeats = 0 } = config.search;
  const versions = iterations + 1;
  const judgments: WorkCount = {
    count: versions,
    upTo: championRule === 'official' ? 1 + 2 * iterations : versions,
  };
  const notes: string[] = [];
  let episodes = exactly(2 + iterations);
  let allJudgments = judgments;
  if (repeats > 0) {
    const perDesign = (repeats * (repeats + 1)) / 2;
    const designs: WorkCount = { count: 1, upTo: 1 + versions };
    const promotions: WorkCount = { count: 0, upTo: versions };
    const replay = championRule === 'official' ? 2 : 1;
    episodes = addCounts(episodes, scaleCount(designs, repeats));
    allJudgments = addCounts(judgments, scaleCount(designs, perDesign), {
      count: 0,
      upTo: promotions.upTo * repeats * replay,
    });
    notes.push(
      `search.repeats ${repeats}: the count reruns the reference alone; the most, every version promoted`,
    );
  }
  if (championRule === 'official')
    notes.push(
      'championRule official: an arbitration match when a version beats the reference while another holds the title',
    );
  return {
    stage: 'search',
    generation,
    tasks,
    episodes: scaleCount(episodes, tasks),
    judgments: scaleCount(allJudgments, tasks),
    judgeCalls: scaleCount(allJudgments, tasks * callsPerJudgment(judgeMode)),
    optimizerCalls: exactly(iterations * tasks),
    notes,
  };
}

/**
 * One generation's champion runs, as `collectChampionRuns` makes them: `runs` per task, and top-ups while fewer than
 * `needed` succeeded, `maxTopUps` at most; twice over with `singleAgentCollection`. Counted for every task, as if every
 * search beat its reference (a task whose search does not is not collected).
 */
export function collectionWork(config: RunConfig, tasks: number, generation: string): StageWork {
  const { runs, maxTopUps, singleAgentCollection } = config.distill;
  const conditions = singleAgentCollection ? 2 : 1;
  const episodes: WorkCount = { count: runs, upTo: runs + maxTopUps };
  return {
    stage: 'collection',
    generation,
    tasks,
    episodes: scaleCount(episodes, tasks * conditions),
    judgments: exactly(0),
    judgeCalls: exactly(0),
    optimizerCalls: exactly(0),
    notes: ['every champion run succeeds'],
  };
}

/** Pairs of the tournament's first round for `players` successful runs, from the schedule the tournament plays. */
export function firstRoundPairs(config: RunConfig, players: number): number {
  if (players < 2) return 0;
  const ids = Array.from({ length: players }, (_, index) => `run-${String(index).padStart(4, '0')}`);
  const { schedule, ringOpponents, adaptive } = config.distill;
  if (schedule === 'round-robin') return roundRobinSchedule(ids, { seed: config.seed }).length;
  const asked = schedule === 'ring' ? ringOpponents : adaptive.initialOpponents;
  // The tournament plays one opponent fewer when an odd number of players would each meet an odd number.
  const opponents = asked % 2 === 1 && players % 2 === 1 ? asked - 1 : asked;
  return ringSchedule(ids, { opponents, seed: config.seed }).length;
}

/**
 * One generation's tournaments: each task's successful runs judged in pairs by the schedule (the adaptive schedule's
 * later rounds add up to `batchSize` pairs each); twice over with `singleAgentCollection`.
 */
export function tournamentWork(config: RunConfig, tasks: number, generation: string): StageWork {
  const { runs, needed, schedule, adaptive, judgeMode, singleAgentCollection } = config.distill;
  const conditions = singleAgentCollection ? 2 : 1;
  const first = firstRoundPairs(config, runs);
  const most = Math.max(first, firstRoundPairs(config, Math.max(runs, needed)));
  const later = schedule === 'adaptive' ? adaptive.rounds * adaptive.batchSize : 0;
  const perTask: WorkCount = { count: first, upTo: most + later };
  const notes = ['every decided tournament match counts'];
  if (later > 0)
    notes.push(`schedule adaptive: up to ${adaptive.rounds} more round(s) of ${adaptive.batchSize} pairs`);
  return {
    stage: 'tournament',
    generation,
    tasks,
    episodes: exactly(0),
    judgments: scaleCount(perTask, tasks * conditions),
    judgeCalls: scaleCount(perTask, tasks * conditions * callsPerJudgment(judgeMode)),
    optimizerCalls: exactly(0),
    notes,
  };
}

/** The episodes `mass rsi` counts for its progress line: per round, each task's search episodes and champion runs. */
export function loopEpisodesPerRound(config: RunConfig, tasks: number): number {
  return searchWork(config, tasks, 'L0').episodes.count + collectionWork(config, tasks, 'L0').episodes.count;
}
