import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { z } from 'zod';

import { SystemError, UserError } from '../errors.js';
import { entryPointOf, rerunEntryPoint, type RerunOptions } from './entry-point-rerun.js';
import { copyForGrading, type LeftOutOfGrading } from './grading-copy.js';
import { isDirectory } from './file-kind.js';
import type { LoadedTask } from './load-task.js';
import { runPython } from './python.js';
import { removeTree } from '../store/remove-tree.js';

/**
 * The outside measure of a finished workspace, from the task's withheld grader. It must never feed the loop: no role
 * (executor, judge, optimizer) sees a grade; evaluation and tests do.
 */

export const GRADE_SCHEMA_VERSION = 1;

export const GradePart = z
  .object({
    name: z.string().min(1),
    weight: z.number().nonnegative(),
    /** 0 (failed) to 1 (as good as the planted truth allows). */
    score: z.number().min(0).max(1),
    reason: z.string(),
    /** When this part scores below 1, the total is capped at this many points (e.g. an edited protected simulator). */
    cap: z.number().min(0).max(100).optional(),
  })
  .strict();
export type GradePart = z.infer<typeof GradePart>;

export const Grade = z
  .object({
    schemaVersion: z.literal(GRADE_SCHEMA_VERSION),
    task: z.string(),
    seed: z.number().int(),
    /** 0 to 100: the weighted mean of the parts, then capped by failed gate parts. */
    score: z.number().min(0).max(100),
    parts: z.array(GradePart).min(1),
    capsApplied: z.array(z.object({ part: z.string(), cap: z.number() }).strict()),
    /**
     * Entries of the workspace the grader was not shown (links, special files, files hard-linked from outside, tool
     * folders, files past the copy's limits; see grading-copy.ts): set by mass, never by the grader.
     */
    leftOut: z.array(z.object({ path: z.string(), reason: z.string() }).strict()).optional(),
  })
  .strict();
export type Grade = z.infer<typeof Grade>;

export interface GradeOptions {
  workspaceDir: string;
  /**
   * The data seed the workspace was materialised with (an episode's `dataSeed`, not its sampling seed): the grader
   * regenerates the planted truth from it.
   */
  seed: number;
  timeoutMs?: number;
  /** Rerun the task's entry point, if it has one, for the grader's reproducibility part; without, none is rerun. */
  rerun?: RerunOptions;
}

/** What the grader is told about the task (never the other way round): deliverables and protected assets with their sources. */
export function graderManifest(task: LoadedTask): unknown {
  const { manifest } = task;
  return {
    id: manifest.id,
    deliverables: manifest.deliverables,
    protected: manifest.protected.map((workspacePath) => {
      const source = manifest.inputs.files.find((file) => file.to === workspacePath);
      return { path: workspacePath, source: source ? path.join(task.dir, source.from) : null };
    }),
  };
}

/**
 * Runs the task's grader on one workspace and validates its JSON; a grader that crashes or prints garbage is a
 * SystemError. The grader reads a copy of the workspace without links or special files (see grading-copy.ts).
 */
export async function gradeWorkspace(task: LoadedTask, options: GradeOptions): Promise<Grade> {
  const [grade] = await gradeWorkspaces(task, {
    workspaceDirs: [options.workspaceDir],
    seed: options.seed,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.rerun ? { rerun: options.rerun } : {}),
  });
  return grade!;
}

export interface GradeManyOptions {
  /** Workspaces of the same task and data seed (e.g. the episodes of one task); graded in one grader process. */
  workspaceDirs: string[];
  /** Their data seed. */
  seed: number;
  timeoutMs?: number;
  /** As for `gradeWorkspace`: each workspace's entry point is rerun, one after another, before the grader runs. */
  rerun?: RerunOptions;
}

/** Whether the task has an objective grader; without one its episodes are measured by the external judges alone. */
export function hasGrader(task: LoadedTask): boolean {
  return task.manifest.oracle !== undefined;
}

/** What is said wherever a task without a grader is left out of grading. */
export const NO_GRADER_REASON = 'its task.yaml names no grader (no `oracle`)';

/** Grades several workspaces of one task and seed in one grader process: the planted truth is computed once. */
export async function gradeWorkspaces(task: LoadedTask, options: GradeManyOptions): Promise<Grade[]> {
  const oracle = task.manifest.oracle;
  if (!oracle) {
    throw new UserError(
      `task ${task.manifest.id} has no grader: ${NO_GRADER_REASON}; only the judges can measure its workspaces (mass eval)`,
    );
  }
  if (options.workspaceDirs.length === 0) return [];
  const workspaceDirs = options.workspaceDirs.map((dir) => path.resolve(dir));
  for (const workspaceDir of workspaceDirs) {
    if (!(await isDirectory(workspaceDir))) {
      throw new UserError(`${workspaceDir}: workspace folder not found; pass the folder the team worked in`);
    }
  }
  const scratch = await mkdtemp(path.join(tmpdir(), 'mass-grade-'));
  try {
    const manifestFile = path.join(scratch, 'manifest.json');
    await writeFile(manifestFile, JSON.stringify(graderManifest(task)));
    // What the grader reads first: copied before anything a limit could leave out.
    const known = [
      ...task.manifest.deliverables.map((deliverable) => deliverable.path),
      ...task.manifest.protected,
    ];
    const copies: string[] = [];
    const leftOut: LeftOutOfGrading[][] = [];
    for (const [index, workspaceDir] of workspaceDirs.entries()) {
      const copy = path.join(scratch, `workspace-${index}`);
      leftOut.push(await copyForGrading(workspaceDir, copy, known));
      copies.push(copy);
    }
    const reruns: string[] = [];
    if (options.rerun && entryPointOf(task)) {
      for (const [index, copy] of copies.entries()) {
        reruns.push(await rerunEntryPoint(task, copy, path.join(scratch, `rerun-${index}`), options.rerun));
      }
    }
    const run = await runPython(
      [
        path.join(task.dir, oracle.grader),
        ...copies.flatMap((copy) => ['--workspace', copy]),
        ...reruns.flatMap((rerun) => ['--rerun', rerun]),
        '--seed',
        String(options.seed),
        '--task-dir',
        task.dir,
        '--manifest',
        manifestFile,
      ],
      { cwd: scratch, timeoutMs: options.timeoutMs ?? 60_000 + 30_000 * workspaceDirs.length },
    );
    const label = `task ${task.manifest.id}: grader ${oracle.grader}`;
    if (run.exitCode !== 0) {
      const why = run.timedOut ? 'timed out' : `exited with ${run.exitCode ?? run.signal}`;
      throw new SystemError(`${label} ${why}:\n${run.stderr.trimEnd().split('\n').slice(-20).join('\n')}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(run.stdout);
    } catch {
      throw new SystemError(`${label} printed something that is not JSON:\n${run.stdout.slice(0, 2000)}`);
    }
    const grades = z
      .array(Grade)
      .length(workspaceDirs.length)
      .safeParse(workspaceDirs.length === 1 ? [json] : json);
    if (!grades.success) {
      throw new SystemError(
        `${label} printed grades that do not fit the schema: ${z.prettifyError(grades.error)}`,
      );
    }
    return grades.data.map((grade, index) => ({ ...grade, leftOut: leftOut[index]! }));
  } finally {
    // The rerun's folder is in it, written by the team's code: however deep.
    await removeTree(scratch);
  }
}
