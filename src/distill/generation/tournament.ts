import { join } from 'node:path';

import { buildWorkspaceBundle, type WorkspaceBundle } from '../../judge/bundle.js';
import { PairwiseJudgmentRecord } from '../../records/judgment-record.js';
import { judgePair } from '../../judge/pairwise-judge.js';
import { adaptiveSchedule } from '../../ranking/adaptive-schedule.js';
import type { Match } from '../../ranking/matches.js';
import { ringSchedule, roundRobinSchedule, type Pair } from '../../ranking/schedules.js';
import { recordWorkPlan } from '../../store/work-plan.js';
import { progressLabel, type GenerationContext, type GenerationTask } from './generation-context.js';
import {
  ScheduleRound,
  MatchOutcome,
  type CollectionRecord,
  type TaskRankingRecord,
} from '../../records/generation-records.js';

/**
 * A task's tournament. Only successful, untampered episodes play: the others can never be selected, so a judgment
 * spent on them would be wasted, and a walkover win over them would lift whoever happened to be drawn against them.
 *
 * Each round's schedule is a step (decided once, so a resumed run plays the same pairs), and so is each match:
 * its judgment record goes to `distill/<generation>/<task>/matches/<index>.json`, and a done match is never judged
 * again. A judgment that failed (no valid verdict within the repairs) is recorded and left out of the fit.
 */
export async function playTournament(
  context: GenerationContext,
  task: GenerationTask,
  players: readonly string[],
  episodeDirectories: ReadonlyMap<string, string>,
): Promise<MatchOutcome[]> {
  const { run, settings } = context;
  const outcomes: MatchOutcome[] = [];
  if (players.length < 2) return outcomes;
  const bundles = new Map<string, Promise<WorkspaceBundle>>();
  const bundleOf = (episodeId: string): Promise<WorkspaceBundle> => {
    let bundle = bundles.get(episodeId);
    if (!bundle) {
      bundle = buildWorkspaceBundle({
        task: task.task,
        location: run.path(episodeDirectories.get(episodeId)!),
        tokenCounter: context.tokenCounter,
        budget: settings.judge.bundleBudget,
      });
      bundles.set(episodeId, bundle);
    }
    return bundle;
  };

  let scheduled = 0;
  let done = 0;
  const lastRound = settings.schedule.kind === 'adaptive' ? settings.schedule.adaptive.rounds : 0;
  for (let round = 0; round <= lastRound; round++) {
    context.gate.throwIfStopped();
    const schedule = await run.step(
      `${task.base}/schedule/${round}`,
      () => scheduleRound(context, round, players, outcomes, scheduled),
      { output: ScheduleRound },
    );
    if (schedule.pairs.length === 0) break;
    scheduled += schedule.pairs.length;
    await recordWorkPlan(run.directory, task.base, { schedule: round + 1, match: scheduled });
    context.progress({ kind: 'judgments', task: progressLabel(task), done, total: scheduled });
    await context.gate.forEach(schedule.pairs, settings.concurrency.judgments, async (pair) => {
      outcomes[pair.index] = await matchStep(context, task, pair, round, bundleOf);
      done++;
      context.progress({ kind: 'judgments', task: progressLabel(task), done, total: scheduled });
    });
  }
  return outcomes;
}

async function scheduleRound(
  context: GenerationContext,
  round: number,
  players: readonly string[],
  outcomes: readonly MatchOutcome[],
  firstIndex: number,
): Promise<ScheduleRound> {
  const { schedule, seed, selection, prior } = context.settings;
  const numbered = (pairs: readonly Pair[]) =>
    pairs.map((pair, offset) => ({ index: firstIndex + offset, x: pair.first, y: pair.second }));
  if (schedule.kind === 'round-robin') {
    return {
      round,
      kind: 'round-robin',
      opponents: null,
      pairs: numbered(roundRobinSchedule(players, { seed })),
    };
  }
  if (round === 0) {
    const asked = schedule.kind === 'ring' ? schedule.ringOpponents : schedule.adaptive.initialOpponents;
    // No schedule gives an odd number of players an odd number of opponents each: play one fewer.
    const opponents = asked % 2 === 1 && players.length % 2 === 1 ? asked - 1 : asked;
    return {
      round,
      kind: 'ring',
      opponents: Math.min(opponents, players.length - 1),
      pairs: numbered(ringSchedule(players, { opponents, seed })),
    };
  }
  const cut = selectionCut(players.length, selection.train, selection.validation);
  if (cut === null) return { round, kind: 'adaptive', opponents: null, pairs: [] };
  const { pairs } = adaptiveSchedule({
    players,
    matches: decidedMatches(outcomes),
    cut,
    seed: seed + round,
    batchSize: schedule.adaptive.batchSize,
    window: schedule.adaptive.window,
    maxMeetings: schedule.adaptive.maxMeetings,
    prior,
  });
  // The schedule sees decided matches only, so it would propose a pair the judge keeps failing on in every round.
  const meetings = new Map<string, number>();
  for (const outcome of outcomes) meetings.set(pairKey(outcome), (meetings.get(pairKey(outcome)) ?? 0) + 1);
  const open = pairs.filter(
    (pair) => (meetings.get(pairKey({ x: pair.first, y: pair.second })) ?? 0) < schedule.adaptive.maxMeetings,
  );
  return { round, kind: 'adaptive', opponents: null, pairs: numbered(open) };
}

function pairKey(pair: { x: string; y: string }): string {
  return pair.x < pair.y ? `${pair.x}\u0000${pair.y}` : `${pair.y}\u0000${pair.x}`;
}

/**
 * The number of players above the cut that decides most: selected or not (train + validation), or, when every
 * player is selected, train or validation. Null when no cut separates anyone.
 */
function selectionCut(players: number, train: number, validation: number): number | null {
  if (train + validation < players) return train + validation;
  if (validation > 0 && train < players) return train;
  return null;
}

async function matchStep(
  context: GenerationContext,
  task: GenerationTask,
  pair: { index: number; x: string; y: string },
  round: number,
  bundleOf: (episodeId: string) => Promise<WorkspaceBundle>,
): Promise<MatchOutcome> {
  const { run, settings, judge } = context;
  const file = join(task.base, 'matches', `${pair.index}.json`);
  return run.step(
    `${task.base}/match/${pair.index}`,
    async (): Promise<MatchOutcome> => {
      const [x, y] = await Promise.all([bundleOf(pair.x), bundleOf(pair.y)]);
      const release = await context.judgeSlots.acquire();
      let judgment;
      try {
        // Checked as it would start, its slot held: a judgment with its repairs and orders is one piece of work.
        context.spending.beforeWork('judge');
        judgment = await judgePair({
          task: task.task,
          x: { label: pair.x, bundle: x },
          y: { label: pair.y, bundle: y },
          model: judge.model,
          modelName: judge.modelName,
          mode: settings.judge.mode,
          seed: settings.seed,
          orderKey: `${task.base}/match/${pair.index}`,
          sampling: judge.sampling,
          maxRepairAttempts: settings.judge.repairAttempts,
          signal: context.signal,
        });
      } finally {
        release();
      }
      await PairwiseJudgmentRecord.write(run.path(file), judgment);
      return {
        ...pair,
        round,
        status: judgment.status,
        winner: judgment.winner,
        shownFirst: judgment.mode === 'random' ? judgment.judgments[0]!.shownAsA : null,
        failure: judgment.failure,
        judgment: file,
      };
    },
    { output: MatchOutcome, produces: [file] },
  );
}

/** The decided matches in the fit's format, `a` being the episode the judge saw first where there was one. */
export function decidedMatches(outcomes: readonly MatchOutcome[]): Match[] {
  return outcomes.flatMap((outcome) => {
    if (outcome.status !== 'decided' || outcome.winner === null) return [];
    const [a, b] = outcome.shownFirst === 'y' ? [outcome.y, outcome.x] : [outcome.x, outcome.y];
    const winner =
      outcome.winner === 'tie' ? 'tie' : (outcome.winner === 'x' ? outcome.x : outcome.y) === a ? 'a' : 'b';
    return [{ a, b, winner }];
  });
}

/** The tournament's players (successful, untampered runs) and the runs left out, with the reason. */
export function tournamentEntrants(collection: CollectionRecord): {
  players: string[];
  excluded: TaskRankingRecord['excluded'];
} {
  const players: string[] = [];
  const excluded: TaskRankingRecord['excluded'] = [];
  for (const episode of collection.episodes) {
    if (episode.status !== 'success') {
      excluded.push({ episodeId: episode.episodeId, reason: 'failed', detail: episode.reason });
    } else if (episode.tampered) {
      excluded.push({ episodeId: episode.episodeId, reason: 'tampered', detail: null });
    } else players.push(episode.episodeId);
  }
  return { players, excluded };
}
