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
} from '../distill/generation/generation-records.js';
import { EpisodeRecord } from '../episode/episode-record.js';
import { buildWorkspaceBundle, type WorkspaceBundle } from '../judge/bundle.js';
import { scanJudgeDirectedText } from '../judge/judge-directed-scan.js';
import { PairwiseJudgmentRecord } from '../judge/judgment-record.js';
import type { Semaphore } from '../model/concurrency.js';
import type { TokenCounter } from '../model/token-counter.js';
import type { JsonlAppender } from '../proxy/jsonl-appender.js';
import { seededRandom, shuffled } from '../ranking/seeded-random.js';
import type { Run } from '../store/run-store.js';
import { hasGrader } from '../tasks/grade.js';
import type { LoadedSuite } from '../tasks/load-suite.js';
import type { LoadedTask } from '../tasks/load-task.js';
import type { ModelRegistry } from '../train/registry.js';
import { gradeStep } from './evaluation-episodes.js';
import { judgmentStep } from './evaluation-judgments.js';
import type { EvaluationPlan } from './evaluation-plan.js';
import type { GradeRow, JudgmentRow } from './evaluation-records.js';
import type { ServedEvaluation } from './serve-evaluation.js';
import {
  oraclePreference,
  type AgreementSample,
  type EvaluatorVerdict,
  type PairOutcome,
  type SelectedRun,
} from './statistics/index.js';
import { judgeSeeds } from '../config/judge-orders.js';

export interface LoopOutsideMeasures {
  selectedRuns: SelectedRun[];
  agreementSamples: AgreementSample[];
  judgments: JudgmentRow[];
  grades: GradeRow[];
  /** Tasks of the loop's collections whose task.yaml names no grader: their runs were not graded. */
  tasksWithoutGrader: string[];
}

/**
 * The outside measures applied to what each evaluated generation's own loop did, read from its records (the loop
 * never reads these back): every run of its collections graded by the oracle, so the runs it selected for training
 * can be placed within their task's collection (reward hacking: selected, yet in the bottom half by the oracle); and
 * a sample of its tournament matches judged again by each external judge, for the agreement of the self-judge (the
 * match's own verdict), the external judges and the oracle. A generation without loop records adds nothing; a task
 * without a grader has its matches judged but its runs not graded, and is listed as such.
 */
export async function loopOutsideMeasures(options: {
  run: Run<RunConfig>;
  suite: LoadedSuite;
  registry: ModelRegistry;
  plan: EvaluationPlan;
  evaluation: EvaluationConfig;
  served: ServedEvaluation;
  base: string;
  tokenCounter: TokenCounter;
  seeds: DataSeeds;
  grades: JsonlAppender;
  judgments: JsonlAppender;
  gradeSlots: Semaphore;
  judgeSlots: ReadonlyMap<string, Semaphore>;
}): Promise<LoopOutsideMeasures> {
  const { run, base } = options;
  const result: LoopOutsideMeasures = {
    selectedRuns: [],
    agreementSamples: [],
    judgments: [],
    grades: [],
    tasksWithoutGrader: [],
  };
  const generations = options.plan.models.filter((model) => options.registry.get(model.name));
  if (generations.length === 0) return result;
  const tasks = new Map(options.suite.tasks.map((task) => [task.manifest.id, task] as const));

  for (const generation of generations) {
    const distilled = await distilledTasks(run, generation.name);
    if (distilled.length === 0) continue;
    const dataset = await DatasetEpisodesRecord.readIfPresent(
      run.path(datasetPath(generation.name, 'episodes.json')),
    );
    const selected = new Set(
      (dataset?.episodes ?? [])
        .filter((episode) => episode.split === 'train')
        .map((episode) => episode.episodeId),
    );
    const verdicts: EvaluatorVerdict[] = [];
    for (const collection of distilled) {
      const task = tasks.get(collection.task);
      if (!task) continue;
      // A task without a grader: its runs are not graded, and the summary names it (figures.grading).
      const gradable = hasGrader(task);
      if (!gradable && !result.tasksWithoutGrader.includes(task.manifest.id)) {
        result.tasksWithoutGrader.push(task.manifest.id);
      }
      const graded = await Promise.all(
        collection.episodes
          .filter((episode) => gradable && episode.status !== 'error')
          .map(async (episode) => {
            // The data seed the run was made with, as its record says (older runs: their one seed).
            const record = await EpisodeRecord.readIfPresent(run.path(episode.dir, episodeFiles.record));
            const dataSeed = record?.dataSeed ?? taskDataSeed(options.seeds, task.manifest.id);
            const release = await options.gradeSlots.acquire();
            try {
              return await gradeStep(
                run,
                base,
                { episodeId: episode.episodeId, dir: episode.dir, task, dataSeed },
                options.grades,
              );
            } finally {
              release();
            }
          }),
      );
      result.grades.push(...graded);
      const gradeOf = new Map(graded.map((row) => [row.episodeId, row.grade]));
      const collectionGrades = graded.flatMap((row) => (row.grade === null ? [] : [row.grade]));
      for (const episode of collection.episodes) {
        if (!selected.has(episode.episodeId)) continue;
        result.selectedRuns.push({
          generation: generation.name,
          task: collection.task,
          run: episode.episodeId,
          grade: gradeOf.get(episode.episodeId) ?? null,
          collectionGrades,
          flagged: episode.tampered,
          judgeDirected: await judgeDirectedOf(task, run.path(episode.dir), episode),
        });
      }
      const sampled = await tournamentVerdicts({
        ...options,
        generation: generation.name,
        task,
        collection,
        gradeOf,
      });
      verdicts.push(...sampled.verdicts);
      result.judgments.push(...sampled.judgments);
    }
    if (verdicts.length > 0)
      result.agreementSamples.push({ name: `tournament ${generation.name}`, verdicts });
  }
  return result;
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

/**
 * Up to `tournamentSample` decided matches of the task's tournament, drawn with the evaluation's seed: the match's
 * own verdict (the self-judge), each external judge's (the majority of its seeds and orders, the orders as
 * `evaluation.orders` says) and the oracle's.
 */
async function tournamentVerdicts(options: {
  run: Run<RunConfig>;
  evaluation: EvaluationConfig;
  served: ServedEvaluation;
  base: string;
  tokenCounter: TokenCounter;
  judgments: JsonlAppender;
  judgeSlots: ReadonlyMap<string, Semaphore>;
  generation: string;
  task: LoadedTask;
  collection: Collection;
  gradeOf: ReadonlyMap<string, number | null>;
}): Promise<{ verdicts: EvaluatorVerdict[]; judgments: JudgmentRow[] }> {
  const { run, evaluation, generation, task, collection } = options;
  const taskId = task.manifest.id;
  const matchesDir = run.path(distillTaskPath(generation, taskId, outerLoopFiles.judgments));
  let files: string[];
  try {
    files = (await readdir(matchesDir)).filter((file) => file.endsWith('.json'));
  } catch {
    return { verdicts: [], judgments: [] };
  }
  const matches = [];
  for (const file of files.sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10))) {
    const match = await PairwiseJudgmentRecord.read(join(matchesDir, file));
    if (match.status === 'decided') matches.push({ index: Number.parseInt(file, 10), match });
  }
  const sample = shuffled(matches, seededRandom(evaluation.seed ?? run.config.seed)).slice(
    0,
    evaluation.tournamentSample,
  );
  const directories = new Map(collection.episodes.map((episode) => [episode.episodeId, episode.dir]));
  const bundles = new Map<string, Promise<WorkspaceBundle>>();
  const bundleOf = (episodeId: string) => {
    let bundle = bundles.get(episodeId);
    if (!bundle) {
      bundle = buildWorkspaceBundle({
        task,
        location: run.path(directories.get(episodeId)!),
        tokenCounter: options.tokenCounter,
      });
      bundles.set(episodeId, bundle);
    }
    return bundle;
  };

  const verdicts: EvaluatorVerdict[] = [];
  const judgments: JudgmentRow[] = [];
  await Promise.all(
    sample.map(async ({ index, match }) => {
      const item = `${generation}/${taskId}/match/${index}`;
      const { x, y } = match;
      verdicts.push({ evaluator: `self:${generation}`, task: taskId, item, outcome: fromX(match.winner!) });
      const gradeX = options.gradeOf.get(x.label);
      const gradeY = options.gradeOf.get(y.label);
      if (typeof gradeX === 'number' && typeof gradeY === 'number') {
        verdicts.push({
          evaluator: 'oracle',
          task: taskId,
          item,
          outcome: oraclePreference(gradeX, gradeY, evaluation.oracleTieMargin),
        });
      }
      for (const judge of options.served.judges) {
        const rows: JudgmentRow[] = [];
        for (const seed of judgeSeeds(evaluation.orders, evaluation.judgeSeeds)) {
          rows.push(
            ...(await judgmentStep({
              run,
              key: `${options.base}/tournament/${generation}/${taskId}/${index}/${judge.name}/${seed}`,
              pair: {
                sample: `tournament ${generation}`,
                task,
                condition: 'tournament',
                replicate: index,
                candidate: { label: x.label, episodeId: x.label, bundle: () => bundleOf(x.label) },
                baseline: { label: y.label, episodeId: y.label, bundle: () => bundleOf(y.label) },
              },
              judge,
              seed,
              orders: evaluation.orders,
              repairAttempts: evaluation.judgeRepairAttempts,
              slots: options.judgeSlots.get(judge.name)!,
              judgments: options.judgments,
            })),
          );
        }
        judgments.push(...rows);
        const outcome = majority(rows.flatMap((row) => (row.outcome === null ? [] : [row.outcome])));
        if (outcome !== null) verdicts.push({ evaluator: judge.name, task: taskId, item, outcome });
      }
    }),
  );
  return { verdicts, judgments };
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
