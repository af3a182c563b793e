import { readdir } from 'node:fs/promises';

import type { EvaluationOrders } from '../config/evaluation-settings.js';
import { searchCoverageSettings } from '../config/search-coverage-setting.js';
import type { EvaluationConfig, RunConfig } from '../config/run-config.js';
import { UserError } from '../errors.js';
import type { JsonlAppender } from '../proxy/jsonl-appender.js';
import { TaskSearchRecord, type SearchEpisode, type TaskSearchResult } from '../records/search-records.js';
import { runFiles, searchResultPath } from '../store/run-paths.js';
import type { Run } from '../store/run-store.js';
import { systemErrorCode } from '../store/system-error-code.js';
import type { LoadedSuite } from '../tasks/load-suite.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { judgmentWork } from './evaluation-judgments.js';
import type { EvaluationJudge } from './evaluation-plan.js';
import type { JudgmentRow } from '../records/evaluation-records.js';
import { byGenerationName, loopTaskCoverage } from '../records/loop-search-coverage.js';
import {
  outsideGenerationCoverage,
  type SearchCoverageFigure,
  type VersionVerdicts,
} from '../records/search-coverage-figure.js';
import type { ServedJudge } from './serve-evaluation.js';
import type { BundleOf } from './workspace-bundles.js';
import { judgmentKey } from '../work/step-keys.js';
import type { Study, WorkRunner } from '../work/work-runner.js';
import { judgeSeeds } from '../config/judge-orders.js';

/**
 * `evaluation.searchCoverage`: the outside measure of how soon each generation's workflow searches found a winning
 * design (the paper's Figure 4). Each version a search ran is judged against that search's bare-task reference run
 * by the evaluation's external judges, each judge with each seed as a step of its own (`judgmentWork`, so a killed
 * evaluation resumes without judging anything twice). The rows go to the evaluation's `judgments.jsonl` with the
 * sample `search-coverage <generation>` (condition `search`, replicate the iteration), which no evaluation figure
 * reads; the figure goes to `summary.json`'s `searchCoverage`. It reads the search records, and nothing in the loop
 * reads what it writes.
 */

/** What will be judged, read and checked before the evaluation runs anything. */
export interface SearchCoveragePlan {
  judgeSeeds: number;
  /** The evaluation's orders: both A/B orders per judge and seed, or one drawn per pair. */
  orders: EvaluationOrders;
  generations: Array<{ generation: string; searches: TaskSearchResult[]; unfinished: string[] }>;
  /** Each searched task's files, from the configuration's suite: the judge's prompt and bundles need them. */
  tasks: ReadonlyMap<string, LoadedTask>;
}

/** The figures' level: the evaluation's own. */
const CONFIDENCE = 0.95;

/**
 * Reads the search records the setting names and checks that they can be judged: null when the setting is off.
 * Refuses a setting that could only give an empty or misleading figure (no external judge, no search record, a
 * generation without searches, a searched task the suite lacks), naming the field and what to do.
 */
export async function planSearchCoverage(options: {
  run: Run<RunConfig>;
  evaluation: EvaluationConfig;
  judges: readonly EvaluationJudge[];
  suite: LoadedSuite;
}): Promise<SearchCoveragePlan | null> {
  const { run, evaluation } = options;
  const settings = searchCoverageSettings(evaluation.searchCoverage, evaluation.judgeSeeds);
  if (settings === null) return null;
  if (options.judges.length === 0) {
    throw new UserError(
      'evaluation.searchCoverage: it judges each searched version with the external judges, and evaluation.judges names none; add a judge, or leave searchCoverage out',
    );
  }
  const searched = (await folders(run.path(runFiles.search))).sort(byGenerationName);
  if (searched.length === 0) {
    throw new UserError(
      `evaluation.searchCoverage: run ${run.directory} has no search records (search/<generation>/<task>/result.json); run mass search or mass rsi first, or leave searchCoverage out`,
    );
  }
  const names = settings.generations ?? searched;
  const unknown = names.filter((name) => !searched.includes(name));
  if (unknown.length > 0) {
    throw new UserError(
      `evaluation.searchCoverage.generations: ${unknown.join(', ')} ${unknown.length === 1 ? 'has' : 'have'} no searches in ${run.path(runFiles.search)}; the searched generations are ${searched.join(', ')}`,
    );
  }
  const known = new Map(options.suite.tasks.map((task) => [task.manifest.id, task] as const));
  const generations: SearchCoveragePlan['generations'] = [];
  const tasks = new Map<string, LoadedTask>();
  for (const generation of names) {
    const searches: TaskSearchResult[] = [];
    const unfinished: string[] = [];
    for (const folder of (await folders(run.path(runFiles.search, generation))).sort()) {
      // A malformed record stops here with an error naming its file (TaskSearchRecord's own).
      const search = await TaskSearchRecord.readIfPresent(run.path(searchResultPath(generation, folder)));
      if (!search) {
        unfinished.push(folder);
        continue;
      }
      const task = known.get(search.task);
      if (!task) {
        throw new UserError(
          `evaluation.searchCoverage: ${searchResultPath(generation, folder)} is a search of task ${search.task}, which suite ${options.suite.dir} does not have; point the configuration's suite at the suite that was searched`,
        );
      }
      tasks.set(search.task, task);
      searches.push(search);
    }
    generations.push({ generation, searches, unfinished });
  }
  return { judgeSeeds: settings.judgeSeeds, orders: evaluation.orders, generations, tasks };
}

/** Every version of every planned search, with its judgments planned. */
type PlannedCoverage = Array<{
  generation: string;
  unfinished: string[];
  tasks: Array<{
    search: TaskSearchResult;
    versions: Array<{
      iteration: number;
      version: string;
      failed: boolean;
      judged: Array<Promise<JudgmentRow[]>>;
    }>;
  }>;
}>;

/**
 * As a study: judges every version of every planned search against its reference, every judge × seed in the
 * evaluation's orders, then computes the figure. A version whose episode failed is not judged and does not win, as in
 * the loop (a walkover).
 */
export function searchCoverageStudy(
  plan: SearchCoveragePlan,
  options: {
    run: Run<RunConfig>;
    /** `evaluation/<name>`: the prefix of the step keys. */
    base: string;
    judges: readonly ServedJudge[];
    repairAttempts: number;
    /** Judgments at a time per judge. */
    concurrency: number;
    judgments: JsonlAppender;
    bundleOf: BundleOf;
  },
): Study<PlannedCoverage, SearchCoverageFigure> {
  const { run } = options;
  const sideOf = (task: LoadedTask, label: string, episode: SearchEpisode) => ({
    label,
    episodeId: episode.episodeId,
    bundle: () => options.bundleOf(task, { episodeId: episode.episodeId, location: run.path(episode.dir) }),
  });
  const plannedWork = (work: WorkRunner): PlannedCoverage =>
    plan.generations.map(({ generation, searches, unfinished }) => ({
      generation,
      unfinished,
      tasks: searches.map((search) => {
        const task = plan.tasks.get(search.task)!;
        return {
          search,
          versions: search.iterations.flatMap((iteration, index) => {
            const episode = iteration.episode;
            if (!episode) return [];
            const failed = episode.status !== 'success';
            const item = {
              kind: 'search-coverage' as const,
              generation,
              task: search.task,
              version: iteration.version,
            };
            const judged = failed
              ? []
              : options.judges.flatMap((judge) =>
                  judgeSeeds(plan.orders, plan.judgeSeeds).map((seed) =>
                    work.submit(
                      judgmentWork({
                        key: judgmentKey(options.base, item, judge.name, seed),
                        pair: {
                          sample: `search-coverage ${generation}`,
                          task,
                          condition: 'search',
                          replicate: index,
                          candidate: sideOf(task, iteration.version, episode),
                          baseline: sideOf(task, 'reference', search.reference),
                        },
                        judge,
                        seed,
                        orders: plan.orders,
                        repairAttempts: options.repairAttempts,
                        concurrency: options.concurrency,
                        judgments: options.judgments,
                      }),
                    ),
                  ),
                );
            return [{ iteration: index, version: iteration.version, failed, judged }];
          }),
        };
      }),
    }));
  return {
    plan: plannedWork,
    summarise: async (planned) => {
      const judgedRows: JudgmentRow[] = [];
      let failedEpisodes = 0;
      const generations = [];
      for (const { generation, unfinished, tasks } of planned) {
        const judgedTasks = [];
        for (const { search, versions } of tasks) {
          const verdicts: VersionVerdicts[] = [];
          for (const version of versions) {
            const rows = (await Promise.all(version.judged)).flat();
            judgedRows.push(...rows);
            if (version.failed) failedEpisodes++;
            verdicts.push({
              iteration: version.iteration,
              version: version.version,
              episodeFailed: version.failed,
              outcomes: rows.map((row) => row.outcome),
            });
          }
          judgedTasks.push({
            task: search.task,
            iterationsRun: search.championHistory.length,
            loopFirstWin: loopTaskCoverage(search).firstWin,
            versions: verdicts,
          });
        }
        generations.push(
          outsideGenerationCoverage({
            generation,
            tasks: judgedTasks.sort((a, b) => a.task.localeCompare(b.task)),
            unfinished,
            confidence: CONFIDENCE,
          }),
        );
      }
      return {
        confidence: CONFIDENCE,
        judges: options.judges.map((judge) => judge.name),
        judgeSeeds: plan.judgeSeeds,
        generations,
        counts: {
          judgments: judgedRows.length,
          failedJudgments: judgedRows.filter((row) => row.status === 'failed').length,
          failedEpisodes,
        },
      };
    },
  };
}

/** One line before the evaluation starts: what the search coverage will judge, and how many judgments that is. */
export function describeSearchCoveragePlan(plan: SearchCoveragePlan, judges: number): string {
  const parts = plan.generations.map(({ generation, searches, unfinished }) => {
    const versions = searches.reduce(
      (sum, search) =>
        sum + search.iterations.filter((iteration) => iteration.episode?.status === 'success').length,
      0,
    );
    const left =
      unfinished.length > 0 ? `; ${unfinished.length} unfinished left out: ${unfinished.join(', ')}` : '';
    return `${generation}: ${versions} version(s) of ${searches.length} search(es)${left}`;
  });
  const versions = plan.generations.reduce(
    (sum, { searches }) =>
      sum +
      searches.reduce(
        (inner, search) =>
          inner + search.iterations.filter((iteration) => iteration.episode?.status === 'success').length,
        0,
      ),
    0,
  );
  const perVersion = judges * plan.judgeSeeds * (plan.orders === 'both' ? 2 : 1);
  return (
    `search coverage: every version judged against its search's reference (${parts.join('; ')}), ` +
    `${judges} judge(s) × ${plan.judgeSeeds} seed(s), orders ${plan.orders}: ${versions * perVersion} judgments`
  );
}

async function folders(path: string): Promise<string[]> {
  try {
    const entries = await readdir(path, { withFileTypes: true });
    return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
  } catch (error) {
    if (systemErrorCode(error) === 'ENOENT') return [];
    throw error;
  }
}
