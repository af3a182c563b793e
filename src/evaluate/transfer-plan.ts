import { readdir } from 'node:fs/promises';

import type { TransferEntry } from '../config/evaluation-settings.js';
import { UserError } from '../errors.js';
import { TaskSearchRecord, type TaskSearchResult } from '../records/search-records.js';
import { searchResultPath } from '../store/run-paths.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { workflowHash } from '../workflow/render.js';
import type { TeamDesign } from '../workflow/workflow.js';
import type { TransferDesignRecord, TransferRecord } from '../records/evaluation-records.js';

/**
 * The paper's Table 2, workflow transfer: "we give the first-round model's workflows to the base model". For each
 * `evaluation.transfer` entry, executor X runs generation Y's champion design of each task (the candidate side)
 * against X running the `against` generation's champion design of the same task (the baseline side, by default X's
 * own). The execution weights are the same on both sides; only the designs differ. This module decides which tasks
 * and designs each side gets, from the run's search records; `evaluate-run.ts` runs and judges them.
 */

/** The condition the transfer's episodes, grades and judgments are recorded under. */
export const TRANSFER_CONDITION = 'transfer' as const;

/** The design one side runs on one task: its generation's search champion. */
export interface TransferDesign extends TransferDesignRecord {
  /** The design rendered into the prompt; null when the champion is the bare task (`reference`), run without one. */
  design: TeamDesign | null;
}

export interface TransferTask {
  task: LoadedTask;
  candidate: TransferDesign;
  baseline: TransferDesign;
}

/** One transfer entry, planned: the labels its two sides carry in every record, and its tasks. */
export interface TransferComparison {
  executor: string;
  designsFrom: string;
  against: string;
  /** `<executor>-with-<designsFrom>-designs`. */
  candidate: string;
  /** `<executor>-with-<against>-designs`. */
  baseline: string;
  tasks: TransferTask[];
  /** Tasks one of the two searches covered (or `evaluation.tasks` named) that the transfer leaves out, and why. */
  leftOut: Array<{ task: string; reason: string }>;
}

/** What transfer planning reads of the run's searches. */
export interface SearchRecords {
  /** The tasks whose search in this generation finished: those with `search/<generation>/<task>/result.json`. */
  searchedTasks(generation: string): Promise<string[]>;
  /** The finished search of one task (one of `searchedTasks`). */
  result(generation: string, task: string): Promise<Pick<TaskSearchResult, 'champion' | 'championDesign'>>;
}

/** The search records of the run in `runDirectory` (resolved with `path`, the run's own `Run.path`). */
export function searchRecordsOf(path: (...segments: string[]) => string): SearchRecords {
  return {
    searchedTasks: async (generation) => {
      let entries: string[];
      try {
        entries = await readdir(path('search', generation));
      } catch {
        return [];
      }
      const searched: string[] = [];
      for (const entry of entries.sort()) {
        const record = await TaskSearchRecord.readIfPresent(path(searchResultPath(generation, entry)));
        if (record) searched.push(entry);
      }
      return searched;
    },
    result: (generation, task) => TaskSearchRecord.read(path(searchResultPath(generation, task))),
  };
}

/**
 * The label a transfer side carries wherever a model's name would be (episode ids and folders, step keys, figures):
 * what ran, as letters, digits, ".", "_" and "-" only, since it becomes part of paths (a queue worker refuses others).
 */
export function transferLabel(executor: string, designsFrom: string): string {
  return `${executor}-with-${designsFrom}-designs`;
}

/**
 * Every transfer entry planned, or refused with what to do: the executor must be a model of the evaluation; the two
 * sides must run different generations' designs; each must have tasks that both generations' searches finished
 * (intersected with the entry's `tasks`, else with `evaluation.tasks`, when given: the evaluation's default test
 * tasks are never searched, so a transfer defaults to the searched tasks instead). A task whose search never beat its bare reference has the bare
 * task as its champion: that side runs the task without a design, recorded as champion `reference` with no hash.
 */
export async function planTransfers(options: {
  entries: readonly TransferEntry[];
  /** The models of this evaluation, by name. */
  models: readonly string[];
  /** Every task of the suite. */
  suiteTasks: readonly LoadedTask[];
  /** `evaluation.tasks`, when given. */
  taskIds?: readonly string[];
  searches: SearchRecords;
}): Promise<TransferComparison[]> {
  const { entries, models, searches } = options;
  const suite = new Map(options.suiteTasks.map((task) => [task.manifest.id, task]));
  const searched = new Map<string, Promise<string[]>>();
  const searchedBy = (generation: string) => {
    let tasks = searched.get(generation);
    if (!tasks) searched.set(generation, (tasks = searches.searchedTasks(generation)));
    return tasks;
  };
  const planned: TransferComparison[] = [];
  for (const [index, entry] of entries.entries()) {
    const field = `evaluation.transfer[${index}]`;
    const against = entry.against ?? entry.executor;
    if (!models.includes(entry.executor)) {
      throw new UserError(
        `${field}.executor: "${entry.executor}" is not a model of this evaluation; they are ${models.join(', ')}`,
      );
    }
    if (entry.designsFrom === against) {
      throw new UserError(
        `${field}: designsFrom and against are both ${against}, so both sides would run the same designs; give designsFrom another generation`,
      );
    }
    const candidate = transferLabel(entry.executor, entry.designsFrom);
    const baseline = transferLabel(entry.executor, against);
    for (const label of [candidate, baseline]) {
      if (models.includes(label)) {
        throw new UserError(
          `${field}: its label "${label}" is also the name of a model of this evaluation; rename that model`,
        );
      }
    }
    if (planned.some((known) => known.candidate === candidate && known.baseline === baseline)) {
      throw new UserError(
        `${field}: ${candidate} against ${baseline} is already an entry of evaluation.transfer`,
      );
    }
    const [fromTasks, againstTasks] = await Promise.all([searchedBy(entry.designsFrom), searchedBy(against)]);
    const both = (task: string) => fromTasks.includes(task) && againstTasks.includes(task);
    const missing = (task: string) =>
      [entry.designsFrom, against]
        .filter((generation) => !(generation === entry.designsFrom ? fromTasks : againstTasks).includes(task))
        .map((generation) => searchResultPath(generation, task));
    // The entry's own tasks, else the evaluation's (which its generation comparisons may need to be test tasks).
    const named = entry.tasks ?? options.taskIds;
    const namedIn = entry.tasks ? `${field}.tasks` : 'evaluation.tasks';
    const unknown = (entry.tasks ?? []).filter((task) => !suite.has(task));
    if (unknown.length > 0) {
      throw new UserError(
        `${field}.tasks: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not in the suite; its tasks: ${[...suite.keys()].join(', ')}`,
      );
    }
    const considered = named ?? [...new Set([...fromTasks, ...againstTasks])].sort();
    const chosen: string[] = [];
    const leftOut: TransferComparison['leftOut'] = [];
    for (const task of considered) {
      if (!suite.has(task)) leftOut.push({ task, reason: 'not a task of the suite' });
      else if (!both(task)) leftOut.push({ task, reason: `no ${missing(task).join(' or ')}` });
      else chosen.push(task);
    }
    if (chosen.length === 0) {
      const held = (generation: string, tasks: readonly string[]) =>
        `search/${generation}/ holds ${tasks.length > 0 ? tasks.join(', ') : 'no finished search'}`;
      throw new UserError(
        `${field}: no task has finished searches of both ${entry.designsFrom} and ${against}` +
          (named
            ? ` among ${namedIn} (missing: ${named.flatMap(missing).join(', ')})`
            : ` (${held(entry.designsFrom, fromTasks)}; ${held(against, againstTasks)})`) +
          `. Run those searches first (mass rsi, or mass search --generation <name>), or name searched tasks in ${field}.tasks`,
      );
    }
    const tasks: TransferTask[] = [];
    for (const id of chosen) {
      const [fromDesign, againstDesign] = await Promise.all([
        transferDesign(searches, entry.designsFrom, id),
        transferDesign(searches, against, id),
      ]);
      tasks.push({ task: suite.get(id)!, candidate: fromDesign, baseline: againstDesign });
    }
    planned.push({
      executor: entry.executor,
      designsFrom: entry.designsFrom,
      against,
      candidate,
      baseline,
      tasks,
      leftOut,
    });
  }
  return planned;
}

async function transferDesign(
  searches: SearchRecords,
  generation: string,
  task: string,
): Promise<TransferDesign> {
  const result = await searches.result(generation, task);
  const design = result.championDesign;
  return { generation, champion: result.champion, design, designHash: design ? workflowHash(design) : null };
}

/** What `summary.json` records of a planned transfer: which generation's design each side ran, per task. */
export function transferRecord(comparison: TransferComparison): TransferRecord {
  const side = ({ generation, champion, designHash }: TransferDesign): TransferDesignRecord => ({
    generation,
    champion,
    designHash,
  });
  return {
    executor: comparison.executor,
    designsFrom: comparison.designsFrom,
    against: comparison.against,
    candidate: comparison.candidate,
    baseline: comparison.baseline,
    tasks: comparison.tasks.map((task) => ({
      task: task.task.manifest.id,
      candidate: side(task.candidate),
      baseline: side(task.baseline),
      sameDesign: task.candidate.designHash === task.baseline.designHash,
    })),
    leftOut: comparison.leftOut,
  };
}

/** One line on what a transfer runs, for the terminal: its sides, its tasks, and what it leaves out. */
export function describeTransferPlan(comparison: TransferComparison): string {
  const bare = (side: 'candidate' | 'baseline') =>
    comparison.tasks.filter((task) => task[side].design === null).map((task) => task.task.manifest.id);
  const notes = [
    `transfer: ${comparison.candidate} against ${comparison.baseline} on ${comparison.tasks.map((task) => task.task.manifest.id).join(', ')} (tasks both ${comparison.designsFrom}'s and ${comparison.against}'s searches finished)`,
  ];
  for (const [side, generation] of [
    ['candidate', comparison.designsFrom],
    ['baseline', comparison.against],
  ] as const) {
    const tasks = bare(side);
    if (tasks.length > 0) {
      notes.push(`${generation}'s search never beat the bare task on ${tasks.join(', ')}: run bare there`);
    }
  }
  const same = comparison.tasks.filter((task) => task.candidate.designHash === task.baseline.designHash);
  if (same.length > 0) {
    notes.push(`same design on both sides: ${same.map((task) => task.task.manifest.id).join(', ')}`);
  }
  if (comparison.leftOut.length > 0) {
    notes.push(
      `left out: ${comparison.leftOut.map((entry) => `${entry.task} (${entry.reason})`).join(', ')}`,
    );
  }
  return notes.join('; ');
}
