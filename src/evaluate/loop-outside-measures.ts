import { readdir, stat } from 'node:fs/promises';
import {
  datasetPath,
  distillTaskPath,
  episodeFiles,
  episodePath,
  outerLoopFiles,
} from '../store/run-paths.js';
import { join } from 'node:path';

import type { DataSeeds } from '../config/data-seeds.js';
import { taskDataSeed } from '../config/data-seeds.js';
import type { EvaluationConfig, RunConfig } from '../config/run-config.js';
import {
  CollectionRecord,
  DatasetEpisodesRecord,
  type CollectedRun,
  type CollectionRecord as Collection,
} from '../records/generation-records.js';
import { EpisodeRecord } from '../records/episode-record.js';
import { scanJudgeDirectedText } from '../judge/judge-directed-scan.js';
import { PairwiseJudgmentRecord, type PairwiseJudgment } from '../records/judgment-record.js';
import type { JsonlAppender } from '../proxy/jsonl-appender.js';
import { seededRandom, shuffled } from '../ranking/seeded-random.js';
import type { Run } from '../store/run-store.js';
import { hasGrader } from '../tasks/grade.js';
import type { LoadedSuite } from '../tasks/load-suite.js';
import type { LoadedTask } from '../tasks/load-task.js';
import type { ModelRegistry } from '../records/registry.js';
import { gradeWork } from './evaluation-episodes.js';
import { evaluationJudging, judgmentWork } from './evaluation-judgments.js';
import type { EvaluationPlan } from './evaluation-plan.js';
import type { GradeRow, JudgmentRow } from '../records/evaluation-records.js';
import type { ServedEvaluation, ServedJudge } from './serve-evaluation.js';
import type { BundleOf } from './workspace-bundles.js';
import { judgmentKey } from '../work/step-keys.js';
import type { Study, WorkRunner } from '../work/work-runner.js';
import {
  oraclePreference,
  type AgreementSample,
  type EvaluatorVerdict,
  type PairOutcome,
  type SelectedRun,
} from '../records/evaluation-statistics/index.js';
import { judgeSeeds } from '../config/judge-orders.js';

export interface LoopOutsideMeasures {
  selectedRuns: SelectedRun[];
  agreementSamples: AgreementSample[];
  judgments: JudgmentRow[];
  grades: GradeRow[];
  /** Tasks of the loop's collections whose task.yaml names no grader: their runs were not graded. */
  tasksWithoutGrader: string[];
}

/** A collection of a generation's loop, with its planned grades and its sampled matches' planned judgments. */
interface PlannedCollection {
  generation: string;
  task: LoadedTask;
  collection: Collection;
  graded: Array<Promise<GradeRow>>;
  matches: PlannedMatch[];
}

interface PlannedMatch {
  index: number;
  match: PairwiseJudgment;
  /** Per external judge, its judgments with each seed. */
  judged: Array<{ judge: string; rows: Array<Promise<JudgmentRow[]>> }>;
}

export interface LoopOutsideOptions {
  run: Run<RunConfig>;
  suite: LoadedSuite;
  registry: ModelRegistry;
  plan: EvaluationPlan;
  evaluation: EvaluationConfig;
  served: ServedEvaluation;
  base: string;
  seeds: DataSeeds;
  grades: JsonlAppender;
  judgments: JsonlAppender;
  bundleOf: BundleOf;
  /** Called once the study has planned all its work (grades of the loops' runs, judgments of their matches). */
  onPlanned?: (work: WorkRunner) => Promise<void> | void;
}

/**
 * The outside measures applied to what each evaluated generation's own loop did, read from its records (the loop
 * never reads these back), as a study: every run of its collections graded by the oracle, so the runs it selected for
 * training can be placed within their task's collection (reward hacking: selected, yet in the bottom half by the
 * oracle); and a sample of its tournament matches judged again by each external judge, for the agreement of the
 * self-judge (the match's own verdict), the external judges and the oracle. A generation without loop records adds
 * nothing; a task without a grader has its matches judged but its runs not graded, and is listed as such.
 */
export function loopOutsideMeasures(
  options: LoopOutsideOptions,
): Study<PlannedCollection[], LoopOutsideMeasures> {
  return {
    plan: async (work) => {
      const planned = await planLoopMeasures(work, options);
      await options.onPlanned?.(work);
      return planned;
    },
    summarise: (planned) => summariseLoopMeasures(planned, options),
  };
}

async function planLoopMeasures(work: WorkRunner, options: LoopOutsideOptions): Promise<PlannedCollection[]> {
  const { run, base } = options;
  const planned: PlannedCollection[] = [];
  const generations = options.plan.models.filter((model) => options.registry.get(model.name));
  const tasks = new Map(options.suite.tasks.map((task) => [task.manifest.id, task] as const));
  for (const generation of generations) {
    for (const collection of await distilledTasks(run, generation.name)) {
      const task = tasks.get(collection.task);
      if (!task) continue;
      const graded = [];
      for (const episode of collection.episodes) {
        if (!hasGrader(task) || episode.status === 'error') continue;
        // The data seed the run was made with, as its record says (older runs: their one seed).
        const record = await EpisodeRecord.readIfPresent(run.path(episode.dir, episodeFiles.record));
        const dataSeed = record?.dataSeed ?? taskDataSeed(options.seeds, task.manifest.id);
        graded.push(
          work.submit(
            gradeWork(
              run,
              base,
              { episodeId: episode.episodeId, dir: episode.dir, task, dataSeed },
              options.grades,
            ),
          ),
        );
      }
      const matches = (await sampledMatches(run, options.evaluation, generation.name, task)).map(
        ({ index, match }) => ({
          index,
          match,
          judged: options.served.judges.map((judge) => ({
            judge: judge.name,
            rows: judgeSeeds(options.evaluation.orders, options.evaluation.judgeSeeds).map((seed) =>
              work.submit(
                matchJudgment(
                  options,
                  { generation: generation.name, task, collection, index, match },
                  judge,
                  seed,
                ),
              ),
            ),
          })),
        }),
      );
      planned.push({ generation: generation.name, task, collection, graded, matches });
    }
  }
  return planned;
}

async function summariseLoopMeasures(
  planned: readonly PlannedCollection[],
  options: LoopOutsideOptions,
): Promise<LoopOutsideMeasures> {
  const { run, evaluation } = options;
  const result: LoopOutsideMeasures = {
    selectedRuns: [],
    agreementSamples: [],
    judgments: [],
    grades: [],
    tasksWithoutGrader: [],
  };
  const selectedOf = new Map<string, Set<string>>();
  const verdictsOf = new Map<string, EvaluatorVerdict[]>();
  for (const { generation, task, collection, graded, matches } of planned) {
    const taskId = task.manifest.id;
    // A task without a grader: its runs are not graded, and the summary names it (figures.grading).
    if (!hasGrader(task) && !result.tasksWithoutGrader.includes(taskId))
      result.tasksWithoutGrader.push(taskId);
    let selected = selectedOf.get(generation);
    if (!selected) {
      selected = await selectedEpisodes(run, generation);
      selectedOf.set(generation, selected);
    }
    const rows = await Promise.all(graded);
    result.grades.push(...rows);
    const gradeOf = new Map(rows.map((row) => [row.episodeId, row.grade]));
    const collectionGrades = rows.flatMap((row) => (row.grade === null ? [] : [row.grade]));
    for (const episode of collection.episodes) {
      if (!selected.has(episode.episodeId)) continue;
      result.selectedRuns.push({
        generation,
        task: collection.task,
        run: episode.episodeId,
        grade: gradeOf.get(episode.episodeId) ?? null,
        collectionGrades,
        flagged: episode.tampered,
        judgeDirected: await judgeDirectedOf(task, run.path(episode.dir), episode),
      });
    }
    const verdicts = verdictsOf.get(generation) ?? [];
    verdictsOf.set(generation, verdicts);
    for (const { index, match, judged } of matches) {
      const item = `${generation}/${taskId}/match/${index}`;
      verdicts.push({ evaluator: `self:${generation}`, task: taskId, item, outcome: fromX(match.winner!) });
      const gradeX = gradeOf.get(match.x.label);
      const gradeY = gradeOf.get(match.y.label);
      if (typeof gradeX === 'number' && typeof gradeY === 'number') {
        verdicts.push({
          evaluator: 'oracle',
          task: taskId,
          item,
          outcome: oraclePreference(gradeX, gradeY, evaluation.oracleTieMargin),
        });
      }
      for (const { judge, rows: seeds } of judged) {
        const judgeRows = (await Promise.all(seeds)).flat();
        result.judgments.push(...judgeRows);
        const outcome = majority(judgeRows.flatMap((row) => (row.outcome === null ? [] : [row.outcome])));
        if (outcome !== null) verdicts.push({ evaluator: judge, task: taskId, item, outcome });
      }
    }
  }
  for (const [generation, verdicts] of verdictsOf) {
    if (verdicts.length > 0) result.agreementSamples.push({ name: `tournament ${generation}`, verdicts });
  }
  return result;
}

/** The episodes a generation selected for training, from its dataset's record. */
async function selectedEpisodes(run: Run<RunConfig>, generation: string): Promise<Set<string>> {
  const dataset = await DatasetEpisodesRecord.readIfPresent(
    run.path(datasetPath(generation, 'episodes.json')),
  );
  return new Set(
    (dataset?.episodes ?? [])
      .filter((episode) => episode.split === 'train')
      .map((episode) => episode.episodeId),
  );
}

/**
 * A selected run's judge-directed text, as its collection recorded it; a run collected before that was recorded is
 * scanned now, if its workspace is still there (null otherwise).
 */
async function judgeDirectedOf(
  task: LoadedTask,
  episodeDir: string,
  episode: CollectedRun,
): Promise<{ spans: number; characters: number } | null> {
  let found = episode.judgeDirected;
  if (!found) {
    const workspace = episodePath(episodeDir, 'workspace');
    const present = await stat(workspace).then(
      (stats) => stats.isDirectory(),
      () => false,
    );
    if (present) found = await scanJudgeDirectedText(task, workspace);
  }
  return found ? { spans: found.spans, characters: found.characters } : null;
}

async function distilledTasks(run: Run<RunConfig>, generation: string): Promise<Collection[]> {
  let entries: string[];
  try {
    entries = await readdir(run.path('distill', generation));
  } catch {
    return [];
  }
  const collections: Collection[] = [];
  for (const entry of entries.sort()) {
    const collection = await CollectionRecord.readIfPresent(
      run.path(distillTaskPath(generation, entry, outerLoopFiles.collection)),
    );
    if (collection) collections.push(collection);
  }
  return collections;
}

/** Up to `tournamentSample` decided matches of the task's tournament, drawn with the evaluation's seed. */
async function sampledMatches(
  run: Run<RunConfig>,
  evaluation: EvaluationConfig,
  generation: string,
  task: LoadedTask,
): Promise<Array<{ index: number; match: PairwiseJudgment }>> {
  const matchesDir = run.path(distillTaskPath(generation, task.manifest.id, outerLoopFiles.judgments));
  let files: string[];
  try {
    files = (await readdir(matchesDir)).filter((file) => file.endsWith('.json'));
  } catch {
    return [];
  }
  const matches = [];
  for (const file of files.sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10))) {
    const match = await PairwiseJudgmentRecord.read(join(matchesDir, file));
    if (match.status === 'decided') matches.push({ index: Number.parseInt(file, 10), match });
  }
  return shuffled(matches, seededRandom(evaluation.seed ?? run.config.seed)).slice(
    0,
    evaluation.tournamentSample,
  );
}

/** An external judge's judgment of a sampled match with one seed, the orders as `evaluation.orders` says. */
function matchJudgment(
  options: LoopOutsideOptions,
  sampled: {
    generation: string;
    task: LoadedTask;
    collection: Collection;
    index: number;
    match: PairwiseJudgment;
  },
  judge: ServedJudge,
  seed: number,
) {
  const { run, evaluation } = options;
  const { generation, task, index } = sampled;
  const { x, y } = sampled.match;
  const directories = new Map(sampled.collection.episodes.map((episode) => [episode.episodeId, episode.dir]));
  const side = (label: string) => ({
    label,
    episodeId: label,
    bundle: () => options.bundleOf(task, { episodeId: label, location: run.path(directories.get(label)!) }),
  });
  return judgmentWork({
    key: judgmentKey(
      options.base,
      { kind: 'tournament', generation, task: task.manifest.id, match: index },
      judge.name,
      seed,
    ),
    pair: {
      sample: `tournament ${generation}`,
      task,
      condition: 'tournament',
      replicate: index,
      candidate: side(x.label),
      baseline: side(y.label),
    },
    judge,
    seed,
    ...evaluationJudging(evaluation, options.judgments),
  });
}

function fromX(winner: 'x' | 'y' | 'tie'): PairOutcome {
  return winner === 'tie' ? 'tie' : winner === 'x' ? 'win' : 'loss';
}

/** A judge's verdict on one item from all its seeds and orders: more wins than losses is a win, equal a tie. */
function majority(outcomes: readonly PairOutcome[]): PairOutcome | null {
  if (outcomes.length === 0) return null;
  const wins = outcomes.filter((outcome) => outcome === 'win').length;
  const losses = outcomes.filter((outcome) => outcome === 'loss').length;
  return wins > losses ? 'win' : losses > wins ? 'loss' : 'tie';
}
