import { existsSync, lstatSync, realpathSync, type Stats } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

import { SystemError, UserError } from '../errors.js';
import { episodePath } from '../store/run-paths.js';
import type { EpisodeJobData } from './episode-job.js';

/** This package's root: a task of its own suites travels as a path inside it, so workers may install it elsewhere. */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface JobPlaces {
  /** The run's folder under `--runs`, as this worker sees it. */
  runDirectory: string;
  /** Where the finished episode goes: `<run>/…/episodes/<id>`. */
  episodeDir: string;
  /** The task's folder: its generator runs on this worker, outside any sandbox, so it must be a trusted suite's. */
  taskDir: string;
}

export interface WorkerFolders {
  runsDirectory: string;
  /** Task suites beside this package's own (`--allow-suite`). */
  suites: readonly string[];
}

/**
 * Where the job's episode and task are on this worker, refused unless the episode goes into an existing run folder
 * under `--runs`, through real folders (no link an episode's agents could have left leads elsewhere) and not inside
 * another episode; and unless the task is one of this package's or of a suite the worker allows, never a folder under
 * `--runs`, which episodes write. Every path is taken as its real path.
 */
export function locateJobOnWorker(job: EpisodeJobData, folders: WorkerFolders): JobPlaces {
  let runs: string;
  try {
    runs = realpathSync(folders.runsDirectory);
  } catch {
    // The worker's own failure, not the job's: retried, as a lost mount is.
    throw new SystemError(
      `this worker's --runs ${folders.runsDirectory} is gone: is the shared folder still mounted?`,
    );
  }
  const runDirectory = join(runs, job.runName);
  const runStat = lstatOrNull(runDirectory);
  if (runStat === null) {
    throw new UserError(
      `its run folder ${job.runName} is not under --runs ${folders.runsDirectory}: the coordinator’s runs folder must be the one this worker mounts there`,
    );
  }
  if (!runStat.isDirectory()) throw new UserError(`its run folder ${runDirectory} is not a folder (a link?)`);

  const segments = job.episodeDir.split('/');
  let folder = runDirectory;
  for (const segment of segments) {
    folder = join(folder, segment);
    const stat = lstatOrNull(folder);
    if (stat === null) break;
    if (!stat.isDirectory()) {
      throw new UserError(`its episode directory goes through ${folder}, which is not a folder (a link?)`);
    }
    if (folder !== join(runDirectory, job.episodeDir) && existsSync(episodePath(folder, 'record'))) {
      throw new UserError(`its episode directory is inside the episode ${folder}`);
    }
  }

  const taskPath =
    'packagePath' in job.task ? join(PACKAGE_ROOT, job.task.packagePath) : job.task.absolutePath;
  let taskDir: string;
  try {
    taskDir = realpathSync(taskPath);
  } catch {
    throw new UserError(`its task folder ${taskPath} does not exist on this worker`);
  }
  if (within(runs, taskDir)) {
    throw new UserError(
      `its task folder ${taskDir} is under --runs, which episodes write: tasks come from suites`,
    );
  }
  const roots = [PACKAGE_ROOT, ...folders.suites].map((root) => realpathOrSelf(root));
  if (!roots.some((root) => within(root, taskDir))) {
    throw new UserError(
      `its task folder ${taskDir} is neither this package’s nor in a suite this worker allows (--allow-suite: ${folders.suites.join(', ') || 'none'})`,
    );
  }
  return { runDirectory, episodeDir: join(runDirectory, job.episodeDir), taskDir };
}

function within(root: string, path: string): boolean {
  const inside = relative(root, path);
  return inside === '' || (inside !== '..' && !inside.startsWith(`..${sep}`) && !isAbsolute(inside));
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function realpathOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
