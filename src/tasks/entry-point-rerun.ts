import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { errorMessage } from '../errors.js';
import { copyForGrading } from './grading-copy.js';
import type { LoadedTask } from './load-task.js';
import { removeTree } from '../store/remove-tree.js';

/**
 * Reproducibility, mass's side: a task's entry point (its `entry-point` deliverable's `command`) is run again in a
 * fresh copy of the finished workspace with the deliverables removed, and the grader compares what it writes with the
 * deliverables the team left (`--rerun`, see suites/research-12/README.md).
 *
 * The code rerun is the team's, so it is hostile: it must run isolated (no network, writing only to its copy, under
 * time, memory, disk and output limits). Isolation lives in a layer above this one (the episode's sandbox), which
 * passes its runner down.
 */

export interface EntryPointRunRequest {
  /** The fresh copy to run in (the command's working folder, and the only folder it may write). */
  folder: string;
  /** The entry point's command, e.g. `python3 run.py`, run by a shell. */
  command: string;
  timeoutSeconds: number;
  /** Host folders it must not see: the task's suite, with every task's grader. */
  hiddenDirectories: string[];
}

export interface EntryPointRunOutcome {
  ok: boolean;
  /** Why it failed (exit status, limit, the end of its error output); empty when it succeeded. */
  reason: string;
}

export type EntryPointRunner = (request: EntryPointRunRequest) => Promise<EntryPointRunOutcome>;

export interface RerunOptions {
  runner: EntryPointRunner;
  /** Default 600 s: a research task's analysis, with its fits, on a busy machine. */
  timeoutSeconds?: number;
}

export const DEFAULT_RERUN_TIMEOUT_SECONDS = 600;

/** The task's entry point, when it has one. */
export function entryPointOf(task: LoadedTask): { path: string; command: string } | undefined {
  const entry = task.manifest.deliverables.find((deliverable) => deliverable.kind === 'entry-point');
  return entry?.kind === 'entry-point' ? { path: entry.path, command: entry.command } : undefined;
}

/**
 * Reruns the entry point of `gradingCopy` (a copy made by `copyForGrading`, which it leaves as it is) under
 * `scratch`, and returns the folder to pass as `--rerun`: what the rerun left, itself copied without links or special
 * files. A failed rerun is written beside it, in `<folder>.outcome.json`; it never throws for what the team's code did.
 */
export async function rerunEntryPoint(
  task: LoadedTask,
  gradingCopy: string,
  scratch: string,
  options: RerunOptions,
): Promise<string> {
  const entry = entryPointOf(task);
  if (!entry) throw new Error(`task ${task.manifest.id} has no entry point to rerun`);
  const work = path.join(scratch, 'work');
  const result = path.join(scratch, 'result');
  await mkdir(scratch, { recursive: true });
  let outcome: EntryPointRunOutcome;
  try {
    await copyForGrading(gradingCopy, work);
    for (const deliverable of task.manifest.deliverables) {
      if (deliverable.kind !== 'entry-point')
        await rm(path.join(work, deliverable.path), { recursive: true, force: true });
    }
    outcome = await options.runner({
      folder: work,
      command: entry.command,
      timeoutSeconds: options.timeoutSeconds ?? DEFAULT_RERUN_TIMEOUT_SECONDS,
      hiddenDirectories: [path.dirname(task.dir)],
    });
  } catch (error) {
    outcome = { ok: false, reason: `could not be run: ${errorMessage(error)}` };
  }
  try {
    await copyForGrading(work, result);
  } catch (error) {
    await removeTree(result);
    await mkdir(result, { recursive: true });
    if (outcome.ok) outcome = { ok: false, reason: `its output could not be copied: ${errorMessage(error)}` };
  }
  if (!outcome.ok) {
    await writeFile(`${result}.outcome.json`, JSON.stringify({ ok: false, reason: outcome.reason }));
  }
  return result;
}
