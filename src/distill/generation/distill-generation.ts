import { StageSpending } from '../../cost/stage-spending.js';
import { UserError } from '../../errors.js';
import { Semaphore } from '../../model/concurrency.js';
import type { ExecutorEndpoint, RoleModel } from '../../model/role-endpoint.js';
import type { TokenCounter } from '../../model/token-counter.js';
import type { EpisodeBackend } from '../../queue/episode-backend.js';
import { distillTaskPath } from '../../store/run-paths.js';
import type { Run } from '../../store/run-store.js';
import { loadTask } from '../../tasks/load-task.js';
import type { TeamDesign } from '../../workflow/workflow.js';
import type { Selection } from '../../records/selection.js';
import { collectStep } from './collect-step.js';
import { datasetStep } from './dataset-step.js';
import type { DistillSettings } from './distill-settings.js';
import {
  progressLabel,
  singleAgentTask,
  type GenerationContext,
  type GenerationTask,
} from './generation-context.js';
import type {
  CollectionRecord,
  DatasetSummary,
  DistillProgressEvent,
  MatchOutcome,
  TaskRankingRecord,
} from '../../records/generation-records.js';
import { fitStep, selectStep } from './rank-and-select.js';
import { playTournament, tournamentEntrants } from './tournament.js';
import { WorkGate } from './work-gate.js';

export interface DistillTask {
  taskDir: string;
  /** The task's champion from the inner loop: a search whose champion beat the bare-task reference. */
  championWorkflow: TeamDesign;
}

export interface DistillGenerationOptions {
  /** An open run; everything lands in it, and every stage is one of its steps. */
  run: Run<unknown>;
  /** The generation whose model plays every role (`L0`, `L1`…): part of every step key, path and episode id. */
  generation: string;
  tasks: readonly DistillTask[];
  executor: ExecutorEndpoint;
  /** The evaluator role: the generation's own model, judging pairs of its workspaces. */
  judge: RoleModel;
  settings: DistillSettings;
  /** The judge model's tokenizer, for the bundles' budgets. */
  tokenCounter: TokenCounter;
  /** The model directory whose chat template and tokenizer make the training data (default: Qwen3's). */
  modelDirectory?: string;
  /**
   * The model the data's tokenizer must be that of (default: the one each episode recorded); a trained generation
   * is served under a name of the run's, so the loop gives the base model's.
   */
  servedModel?: string;
  /** Build with a tokenizer of another family than the served model's (see `checkTrainingTokenizer`). */
  allowTokenizerMismatch?: boolean;
  /** Further directories the agents must not see; the run directory is always hidden. */
  hiddenDirectories?: readonly string[];
  /** Progress for a display; an exception thrown here stops the generation like any failure. */
  onProgress?: (event: DistillProgressEvent) => void;
  /** Stops starting new work and cancels the judge calls in flight; episodes already running finish. */
  signal?: AbortSignal;
  /** Where the collection's episodes run (default: in this process). */
  episodes?: EpisodeBackend;
}

export interface DistilledTask {
  task: string;
  taskDir: string;
  collection: CollectionRecord;
  /** Indexed by pair index. */
  matches: MatchOutcome[];
  ranking: TaskRankingRecord;
  selection: Selection;
  /** The same task single-agent, collected, ranked and selected the same way (`collection.singleAgent`). */
  singleAgent?: Omit<DistilledTask, 'singleAgent'>;
}

export interface DistillGenerationResult {
  generation: string;
  perTask: DistilledTask[];
  /** `dir` relative to the run directory, `path` absolute. */
  dataset: DatasetSummary & { path: string };
}

const generationPattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * One generation's outer-loop data (MASS.md §4): for each task, the champion run with the teacher directive
 * (collection), a tournament judged by the generation's own model, Bradley–Terry, and the selection of ranks
 * 1..train and the validation ranks; then the training windows of every selected episode together.
 *
 * Every stage is a step of the run store, keyed `distill/<generation>/<task>/…`, so calling this again after a
 * crash, an abort or a failure redoes only what had not finished, and after completion it makes no model call and
 * returns the same result. A budget (`settings.budgets`) spent stops the generation before the next episode or
 * judgment (`BudgetExhaustedError`, exit 3) once the work under way has finished. Tasks are collected one after another; each task's tournament runs while the next one
 * collects. Settings are read when a step first runs: a done step keeps what it stored.
 */
export async function distillGeneration(options: DistillGenerationOptions): Promise<DistillGenerationResult> {
  const { run, generation, settings } = options;
  if (!generationPattern.test(generation)) {
    throw new UserError(`generation "${generation}": use letters, digits, ".", "_" and "-" (e.g. L0)`);
  }
  if (options.tasks.length === 0) {
    throw new UserError(`generation ${generation}: no task to distil (no search beat its reference)`);
  }
  const tasks = await loadTasks(generation, options.tasks);
  const gate = new WorkGate(options.signal);
  const spending = await StageSpending.open(
    run.directory,
    { stage: 'distill', label: generation },
    settings.budgets,
    settings.executorPrices,
  );
  const context: GenerationContext = {
    run,
    generation,
    executor: options.executor,
    judge: spending.metered('judge', options.judge),
    spending,
    settings,
    tokenCounter: options.tokenCounter,
    hiddenDirectories: [run.directory, ...(options.hiddenDirectories ?? [])],
    judgeSlots: new Semaphore(settings.concurrency.judgments),
    gate,
    episodes: options.episodes,
    signal: options.signal,
    progress: (event) => options.onProgress?.(event),
  };

  const ranked: Array<Promise<DistilledTask | undefined>> = [];
  const singleRanked: Array<Promise<DistilledTask | undefined>> = [];
  for (const task of tasks) {
    if (gate.stopped) break;
    const collection = await gate.track(() => collect(context, task));
    if (collection === undefined) break;
    ranked.push(gate.track(() => rankAndSelect(context, task, collection)));
    if (settings.collection.singleAgent) {
      const single = singleAgentTask(task);
      const singleCollection = await gate.track(() => collect(context, single));
      if (singleCollection === undefined) break;
      singleRanked.push(gate.track(() => rankAndSelect(context, single, singleCollection)));
    }
  }
  const perTask = await Promise.all(ranked);
  const singles = await Promise.all(singleRanked);
  gate.throwIfStopped();
  const distilled = perTask.map((entry, index) =>
    singles[index] ? { ...entry!, singleAgent: singles[index] } : entry!,
  );

  context.progress({ kind: 'stage', stage: 'dataset', task: null });
  const dataset = await datasetStep(
    context,
    // The training data is the team's alone: single-agent selections are for `mass students`.
    distilled.map((entry, index) => ({
      task: tasks[index]!,
      collection: entry.collection,
      selection: entry.selection,
    })),
    {
      modelDirectory: options.modelDirectory,
      servedModel: options.servedModel,
      allowTokenizerMismatch: options.allowTokenizerMismatch,
    },
  );
  return { generation, perTask: distilled, dataset: { ...dataset, path: run.path(dataset.dir) } };
}

async function loadTasks(generation: string, inputs: readonly DistillTask[]): Promise<GenerationTask[]> {
  const tasks: GenerationTask[] = [];
  for (const input of inputs) {
    const task = await loadTask(input.taskDir);
    const id = task.manifest.id;
    if (tasks.some((other) => other.id === id)) {
      throw new UserError(`generation ${generation}: task "${id}" is given twice; give each task once`);
    }
    tasks.push({ task, id, championWorkflow: input.championWorkflow, base: distillTaskPath(generation, id) });
  }
  return tasks;
}

async function collect(context: GenerationContext, task: GenerationTask): Promise<CollectionRecord> {
  const { runs } = context.settings.collection;
  context.progress({ kind: 'stage', stage: 'collect', task: progressLabel(task) });
  context.progress({ kind: 'episodes', task: progressLabel(task), done: 0, total: runs });
  let done = 0;
  const collection = await collectStep(context, task, () =>
    context.progress({
      kind: 'episodes',
      task: progressLabel(task),
      done: ++done,
      total: Math.max(runs, done),
    }),
  );
  const total = collection.episodes.length;
  context.progress({ kind: 'episodes', task: progressLabel(task), done: total, total });
  return collection;
}

async function rankAndSelect(
  context: GenerationContext,
  task: GenerationTask,
  collection: CollectionRecord,
): Promise<DistilledTask> {
  const entrants = tournamentEntrants(collection);
  const directories = new Map(collection.episodes.map((episode) => [episode.episodeId, episode.dir]));
  context.progress({ kind: 'stage', stage: 'tournament', task: progressLabel(task) });
  const matches = await playTournament(context, task, entrants.players, directories);
  context.gate.throwIfStopped();
  context.progress({ kind: 'stage', stage: 'fit', task: progressLabel(task) });
  const ranking = await fitStep(context, task, entrants, matches);
  context.progress({ kind: 'stage', stage: 'select', task: progressLabel(task) });
  const selection = await selectStep(context, task, collection, ranking);
  return { task: task.id, taskDir: task.task.dir, collection, matches, ranking, selection };
}
