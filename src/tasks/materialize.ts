import { copyFile, mkdir, mkdtemp, readdir, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { SystemError, UserError } from '../errors.js';
import { durationMs } from '../timer-duration.js';
import { copyTaskFile } from './harbor-task-files.js';
import { expectedProtectedDigests, type ProtectedAssetDigest } from './integrity.js';
import type { LoadedTask } from './load-task.js';
import { runPython } from './python.js';

export interface MaterializeOptions {
  /** The data seed: the generator draws the workspace's data from it (an episode's sampling seed plays no part). */
  seed: number;
  /** Created if missing; must be empty if it exists. */
  workspaceDir: string;
}

export interface MaterializedWorkspace {
  taskId: string;
  seed: number;
  workspaceDir: string;
  /** Every file the workspace starts with, workspace-relative and sorted. */
  files: string[];
  /** Digests of the protected assets as copied; compare after the run. */
  protectedAssets: ProtectedAssetDigest[];
}

/**
 * Creates a task's starting workspace for one data seed: copies the declared input files and runs the generator, which
 * writes into the workspace's output folder. Nothing of the withheld folders (oracle, generator, shared grading code)
 * is copied; the generator runs from the task folder in a scratch directory.
 */
export async function materializeWorkspace(
  task: LoadedTask,
  options: MaterializeOptions,
): Promise<MaterializedWorkspace> {
  const { seed } = options;
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > 2 ** 31 - 1) {
    throw new UserError(`seed ${seed}: use an integer from 0 to 2147483647`);
  }
  const workspaceDir = path.resolve(options.workspaceDir);
  await mkdir(workspaceDir, { recursive: true });
  if ((await readdir(workspaceDir)).length > 0) {
    throw new UserError(`${workspaceDir}: the workspace folder is not empty; pass a new or empty folder`);
  }

  for (const file of task.manifest.inputs.files) {
    if (task.harbor) {
      // A dataset's file: never followed through a link put there after the task was loaded.
      await copyTaskFile(task.dir, file.from, path.join(workspaceDir, file.to));
      continue;
    }
    const source = await realpath(path.join(task.dir, file.from));
    if (await isWithheld(task, source)) {
      throw new UserError(
        `${task.manifestPath}: input "${file.from}" resolves into a withheld folder; remove it`,
      );
    }
    const destination = path.join(workspaceDir, file.to);
    await mkdir(path.dirname(destination), { recursive: true });
    await copyFile(source, destination);
  }

  const generator = task.manifest.inputs.generator;
  if (generator) {
    const outputDir = path.join(workspaceDir, generator.outputDir);
    await mkdir(outputDir, { recursive: true });
    const scratch = await mkdtemp(path.join(tmpdir(), 'mass-generator-'));
    try {
      const run = await runPython(
        [path.join(task.dir, generator.script), '--seed', String(seed), '--out', outputDir],
        { cwd: scratch, timeoutMs: durationMs(generator.timeoutSeconds, 's') },
      );
      if (run.exitCode !== 0) {
        const why = run.timedOut
          ? `timed out after ${generator.timeoutSeconds} s`
          : `exited with ${run.exitCode ?? run.signal}`;
        throw new SystemError(
          `task ${task.manifest.id}: generator ${generator.script} ${why} for seed ${seed}:\n${tail(run.stderr)}`,
        );
      }
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  return {
    taskId: task.manifest.id,
    seed,
    workspaceDir,
    files: await listFiles(workspaceDir),
    protectedAssets: await expectedProtectedDigests(task),
  };
}

async function isWithheld(task: LoadedTask, file: string): Promise<boolean> {
  for (const dir of task.withheldDirs) {
    let resolved: string;
    try {
      resolved = await realpath(dir);
    } catch {
      continue;
    }
    if (file === resolved || file.startsWith(`${resolved}${path.sep}`)) return true;
  }
  return false;
}

/** Every regular file under `dir`, relative and sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

function tail(text: string, lines = 20): string {
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
