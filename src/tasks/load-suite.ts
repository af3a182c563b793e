import { readdir } from 'node:fs/promises';
import path from 'node:path';

import { errorMessage, UserError } from '../errors.js';
import { isDirectory, isFile } from './file-kind.js';
import { loadTask, readYamlFile, SUITE_FILE, TASK_FILE, type LoadedTask } from './load-task.js';
import { SuiteManifest } from './suite-manifest.js';

export interface LoadedSuite {
  dir: string;
  name: string;
  description?: string;
  tasks: LoadedTask[];
}

/** One folder's outcome when a suite is checked: the task, or why it could not be loaded. */
export type TaskLoadOutcome =
  { dir: string; ok: true; task: LoadedTask } | { dir: string; ok: false; error: string };

export interface SuiteCheck {
  dir: string;
  name: string;
  description?: string;
  outcomes: TaskLoadOutcome[];
  /** Problems of the suite as a whole (an invalid suite.yaml, no task folders). Task ids are unique: each is its folder name. */
  suiteProblems: string[];
}

/** Loads every task of a suite (each sub-folder with a task.yaml) and reports each folder's outcome; never throws for a bad task. */
export async function checkSuite(suiteDir: string): Promise<SuiteCheck> {
  const dir = path.resolve(suiteDir);
  if (!(await isDirectory(dir)))
    throw new UserError(`${dir}: not a folder. Pass a suite folder (one holding task folders).`);
  const suiteProblems: string[] = [];
  let name = path.basename(dir);
  let description: string | undefined;
  const suiteFile = path.join(dir, SUITE_FILE);
  if (await isFile(suiteFile)) {
    try {
      const suite = await readYamlFile(suiteFile, SuiteManifest);
      name = suite.name;
      description = suite.description;
    } catch (error) {
      suiteProblems.push(errorMessage(error));
    }
  }

  const entries = (await readdir(dir, { withFileTypes: true }))
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();
  const taskDirs: string[] = [];
  for (const entry of entries) {
    if (await isFile(path.join(dir, entry, TASK_FILE))) taskDirs.push(path.join(dir, entry));
  }
  if (taskDirs.length === 0) {
    suiteProblems.push(`${dir}: no task folders (sub-folders with a ${TASK_FILE}) found`);
  }

  const outcomes: TaskLoadOutcome[] = [];
  for (const taskDir of taskDirs) {
    try {
      outcomes.push({ dir: taskDir, ok: true, task: await loadTask(taskDir) });
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      outcomes.push({ dir: taskDir, ok: false, error: error.message });
    }
  }
  return { dir, name, ...(description ? { description } : {}), outcomes, suiteProblems };
}

/** Loads a suite and throws one UserError listing every problem if any task is invalid. */
export async function loadSuite(suiteDir: string): Promise<LoadedSuite> {
  const check = await checkSuite(suiteDir);
  const problems = [
    ...check.suiteProblems,
    ...check.outcomes.flatMap((outcome) => (outcome.ok ? [] : [outcome.error])),
  ];
  if (problems.length > 0) throw new UserError(problems.join('\n'));
  const tasks = check.outcomes.flatMap((outcome) => (outcome.ok ? [outcome.task] : []));
  return {
    dir: check.dir,
    name: check.name,
    ...(check.description ? { description: check.description } : {}),
    tasks,
  };
}

export function findTask(suite: LoadedSuite, taskId: string): LoadedTask {
  const task = suite.tasks.find((candidate) => candidate.manifest.id === taskId);
  if (!task) {
    throw new UserError(
      `suite ${suite.dir} has no task "${taskId}". Its tasks: ${suite.tasks.map((known) => known.manifest.id).join(', ')}`,
    );
  }
  return task;
}
