import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

import type { EvaluationOrders } from '../config/evaluation-settings.js';
import { evaluationConfig } from '../config/evaluation-settings.js';
import type { RunConfig } from '../config/run-config.js';
import { CollectionRecord, type CollectedRun } from '../records/generation-records.js';
import { SINGLE_AGENT_FOLDER } from '../store/run-paths.js';
import { EpisodeRecord } from '../records/episode-record.js';
import { UserError } from '../errors.js';
import { evaluationJudging, judgmentWork } from '../evaluate/evaluation-judgments.js';
import type { JudgmentRow } from '../records/evaluation-records.js';
import { EvaluationSpending } from '../evaluate/evaluation-spending.js';
import { serveEvaluation } from '../evaluate/serve-evaluation.js';
import { allJudges, pairPreferences } from '../records/evaluation-statistics/index.js';
import { judgeWinRates, type ScoredVerdict } from '../records/evaluation-statistics/win-rates.js';
import type { RunSession } from '../session/run-session.js';
import { workspaceBundles } from '../evaluate/workspace-bundles.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { judgmentKey, TEAM_VS_SINGLE } from '../work/step-keys.js';
import { runStudy, WorkRunner } from '../work/work-runner.js';
import { JsonlAppender } from '../proxy/jsonl-appender.js';
import { distillTaskPath, episodePath, outerLoopFiles } from '../store/run-paths.js';
import { judgeSeeds } from '../config/judge-orders.js';
import type { ConditionPair, TeamVersusSingle } from '../records/students-record.js';

/** `students/<name>/team-vs-single/`: the judgments of the round's team outputs against its single-agent ones. */
export const TEAM_VS_SINGLE_FOLDER = TEAM_VS_SINGLE;
/** The condition its judgment rows carry. */
const CONDITION = 'team-vs-single-agent';
const CONFIDENCE = 0.95;
const RESAMPLES = 1000;

interface PlannedPair {
  task: string;
  seed: number;
  team: CollectedRun;
  single: CollectedRun;
  teamOutputTokens: number;
  singleOutputTokens: number;
}

/**
 * Pairs the round's team runs with its single-agent runs of the same task and seed, from the collections the loop
 * recorded (`distill/<generation>/<task>/collection.json` and `single-agent/collection.json`). Null when the round
 * collected no task single-agent.
 */
export async function planConditionPairs(
  runDirectory: string,
  generation: string,
): Promise<{ pairs: PlannedPair[]; unpaired: TeamVersusSingle['unpaired'] } | null> {
  const distillDir = join(runDirectory, 'distill', generation);
  if (!existsSync(distillDir)) return null;
  const pairs: PlannedPair[] = [];
  const unpaired: TeamVersusSingle['unpaired'] = [];
  let collected = false;
  const tasks = (await readdir(distillDir, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  for (const task of tasks) {
    const singleFile = join(
      runDirectory,
      distillTaskPath(generation, task, SINGLE_AGENT_FOLDER),
      outerLoopFiles.collection,
    );
    const teamFile = join(runDirectory, distillTaskPath(generation, task), outerLoopFiles.collection);
    if (!existsSync(singleFile) || !existsSync(teamFile)) continue;
    collected = true;
    const team = await CollectionRecord.read(teamFile);
    const single = await CollectionRecord.read(singleFile);
    const singleBySeed = new Map(single.episodes.map((episode) => [episode.seed, episode]));
    const teamSeeds = new Set(team.episodes.map((episode) => episode.seed));
    for (const teamRun of team.episodes) {
      const singleRun = singleBySeed.get(teamRun.seed);
      const problem = unusable(teamRun) ?? (singleRun ? unusable(singleRun) : null);
      if (!singleRun || problem !== null) {
        unpaired.push({
          task,
          episodeId: teamRun.episodeId,
          reason: singleRun
            ? `pair with ${singleRun.episodeId}: ${problem}`
            : `no single-agent run with seed ${teamRun.seed}`,
        });
        continue;
      }
      pairs.push({
        task,
        seed: teamRun.seed,
        team: teamRun,
        single: singleRun,
        teamOutputTokens: await outputTokens(runDirectory, teamRun),
        singleOutputTokens: await outputTokens(runDirectory, singleRun),
      });
    }
    for (const singleRun of single.episodes) {
      if (teamSeeds.has(singleRun.seed)) continue;
      unpaired.push({
        task,
        episodeId: singleRun.episodeId,
        reason: `no team run with seed ${singleRun.seed}`,
      });
    }
  }
  return collected ? { pairs, unpaired } : null;
}

function unusable(run: CollectedRun): string | null {
  if (run.status !== 'success') return `${run.episodeId} ended in ${run.status}`;
  if (run.tampered) return `${run.episodeId} changed a protected file`;
  return null;
}

async function outputTokens(runDirectory: string, run: CollectedRun): Promise<number> {
  const record = await EpisodeRecord.read(episodePath(join(runDirectory, run.dir), 'record'));
  return record.usage.total.completionTokens;
}

/** Neither side generated more than `ratio` times the other's output tokens (two empty outputs match). */
export function lengthMatched(left: number, right: number, ratio: number): boolean {
  const [small, large] = left <= right ? [left, right] : [right, left];
  return large <= ratio * small;
}

/**
 * The figures from the judgment rows (the team as the candidate): per judge and, with two judges or more, pooled;
 * over every pair and over the length-matched pairs. Failed judgments count apart and decide nothing.
 */
export function teamVersusSingleFigures(options: {
  generation: string;
  judges: readonly string[];
  judgeSeeds: number;
  orders: EvaluationOrders;
  lengthRatio: number;
  pairs: ReadonlyArray<
    Pick<ConditionPair, 'task' | 'seed' | 'team' | 'single' | 'teamOutputTokens' | 'singleOutputTokens'>
  >;
  unpaired: TeamVersusSingle['unpaired'];
  rows: readonly JudgmentRow[];
  bootstrapSeed: number;
}): TeamVersusSingle {
  const matched = new Set(
    options.pairs
      .filter((pair) => lengthMatched(pair.teamOutputTokens, pair.singleOutputTokens, options.lengthRatio))
      .map((pair) => pairKey(pair.task, pair.seed)),
  );
  const decided = options.rows.filter((row) => row.outcome !== null);
  const verdict = (row: JudgmentRow): ScoredVerdict => ({
    task: row.task,
    replicate: row.replicate,
    outcome: row.outcome!,
  });
  const bootstrap = { seed: options.bootstrapSeed, resamples: RESAMPLES, confidence: CONFIDENCE };
  const figures = (rows: readonly JudgmentRow[]) => {
    const perJudge = options.judges.map((judge) =>
      judgeWinRates(judge, rows.filter((row) => row.judge === judge).map(verdict), bootstrap),
    );
    return options.judges.length > 1
      ? [...perJudge, judgeWinRates(allJudges, rows.map(verdict), bootstrap)]
      : perJudge;
  };
  const preferences = new Map(
    pairPreferences(decided.map(verdict)).map((pair) => [pairKey(pair.task, pair.replicate), pair]),
  );
  return {
    generation: options.generation,
    judges: [...options.judges],
    judgeSeeds: options.judgeSeeds,
    orders: options.orders,
    lengthRatio: options.lengthRatio,
    pairs: options.pairs.map((pair) => {
      const preference = preferences.get(pairKey(pair.task, pair.seed));
      return {
        task: pair.task,
        seed: pair.seed,
        team: pair.team,
        single: pair.single,
        teamOutputTokens: pair.teamOutputTokens,
        singleOutputTokens: pair.singleOutputTokens,
        lengthMatched: matched.has(pairKey(pair.task, pair.seed)),
        judgments: preference?.judgments ?? 0,
        preference: preference?.preference ?? null,
      };
    }),
    unpaired: options.unpaired,
    overall: figures(decided),
    lengthMatched: figures(decided.filter((row) => matched.has(pairKey(row.task, row.replicate)))),
    failedJudgments: options.rows.length - decided.length,
  };
}

function pairKey(task: string, seed: number): string {
  return `${task}\u0000${seed}`;
}

/**
 * Judges every pair of the round's team and single-agent runs with the run's external judges, every judge with every
 * seed in the evaluation's orders, each as a step of the experiment's run (so a killed experiment judges nothing
 * twice); the rows go to `team-vs-single/judgments.jsonl`. Null when the round collected no task single-agent.
 */
export async function judgeTeamVersusSingle(options: {
  /** The run whose round is judged. */
  runDirectory: string;
  /** The experiment's session: its run directory (steps and files), the suite, the model's kind, its pools. */
  session: RunSession;
  config: RunConfig;
  generation: string;
  lengthRatio: number;
  onProgress?: (line: string) => void;
}): Promise<TeamVersusSingle | null> {
  const { session, config, generation } = options;
  const { run } = session;
  const planned = await planConditionPairs(options.runDirectory, generation);
  if (planned === null) return null;
  const evaluation = evaluationConfig(config);
  const judges = evaluation.judges.map((endpoint) => ({ name: endpoint.name ?? endpoint.model, endpoint }));
  if (judges.length === 0) {
    throw new UserError(
      `${options.runDirectory}: the run's configuration names no external judge (evaluation.judges); the team's outputs are judged against the single agent's by them`,
    );
  }
  const suite = await session.suite();
  const tasks = new Map(suite.tasks.map((task) => [task.manifest.id, task]));
  for (const pair of planned.pairs) {
    if (!tasks.has(pair.task)) {
      throw new UserError(
        `${options.runDirectory}: task ${pair.task} of ${generation}'s collections is not in suite ${suite.dir}; give the run's suite with --suite <dir>`,
      );
    }
  }
  const perPair = judges.length * evaluation.judgeSeeds * (evaluation.orders === 'both' ? 2 : 1);
  options.onProgress?.(
    `team against single agent: ${planned.pairs.length} pair(s) of ${generation}'s runs, ${perPair} judgment(s) each (${planned.unpaired.length} run(s) unpaired)`,
  );
  const bundleOf = workspaceBundles(await session.tokenCounter());
  // Each judge call is journaled, and each judgment checked against the budgets as it would start (stage `students`).
  const spending = await EvaluationSpending.open(run, config, TEAM_VS_SINGLE_FOLDER, 'students');
  const served = spending.served(
    await serveEvaluation(config, session.kind.host, [], judges, { selfJudge: false }),
  );
  const pools = session.endpointPools();
  const appender = new JsonlAppender(run.path(TEAM_VS_SINGLE_FOLDER, 'judgments.jsonl'));
  try {
    const side = (task: LoadedTask, label: string, episode: CollectedRun) => ({
      label,
      episodeId: episode.episodeId,
      bundle: () =>
        bundleOf(task, { episodeId: episode.episodeId, location: join(options.runDirectory, episode.dir) }),
    });
    const rows = await runStudy(
      {
        plan: (work) =>
          planned.pairs.flatMap((pair) => {
            const task = tasks.get(pair.task)!;
            const item = { kind: 'team-vs-single' as const, generation, task: pair.task, seed: pair.seed };
            return served.judges.flatMap((judge) =>
              judgeSeeds(evaluation.orders, evaluation.judgeSeeds).map((seed) =>
                work.submit(
                  judgmentWork({
                    key: judgmentKey('', item, judge.name, seed),
                    pair: {
                      sample: `team-vs-single ${generation}`,
                      task,
                      condition: CONDITION,
                      replicate: pair.seed,
                      candidate: side(task, 'team', pair.team),
                      baseline: side(task, 'single-agent', pair.single),
                    },
                    judge,
                    seed,
                    ...evaluationJudging(evaluation, appender),
                  }),
                ),
              ),
            );
          }),
        summarise: async (judged) => (await Promise.all(judged)).flat(),
      },
      new WorkRunner(run, pools, { beforeWork: (kind) => spending.beforeWork(kind) }),
    );
    return teamVersusSingleFigures({
      generation,
      judges: judges.map((judge) => judge.name),
      judgeSeeds: evaluation.judgeSeeds,
      orders: evaluation.orders,
      lengthRatio: options.lengthRatio,
      pairs: planned.pairs.map((pair) => ({
        ...pair,
        team: pair.team.episodeId,
        single: pair.single.episodeId,
      })),
      unpaired: planned.unpaired,
      rows,
      bootstrapSeed: evaluation.seed ?? config.seed,
    });
  } finally {
    await Promise.allSettled([appender.close(), pools.close()]);
    await served.close();
  }
}
