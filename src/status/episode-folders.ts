import { stat } from 'node:fs/promises';
import { join } from 'node:path';

import { episodeFiles, evaluationPath, runFiles } from '../store/run-paths.js';
import { readCallLog, type CallLog } from './call-log.js';
import { entryNames, readOptional } from './optional-file.js';

/** The workers' folder of episodes being written, beside the episodes (see the queue's episode worker). */
const STAGING = '.staging';

/** One episode folder of the run, as `mass status` sees it. */
export interface EpisodeFolder {
  id: string;
  /** Relative to the run directory. */
  dir: string;
  /** Written by a queue worker, still under its staging name. */
  staged: boolean;
  /** `episode.json` is there: the episode has finished. */
  finished: boolean;
  /** From `episode.json`: `success` or `failure`. */
  status: string | null;
  /** From `episode.json`, for a failed episode. */
  failure: string | null;
  /** The last change to the folder's log or open calls, in ms since the epoch. */
  lastActivityMs: number;
  /** The proxy log's calls: read for unfinished episodes and for those active within the window. */
  log: CallLog | null;
}

/**
 * Every episode folder of the run (`episodes/`, each evaluation's `episodes/`, and the queue workers' staging folders
 * under them). The proxy log of an episode is read only when it is unfinished or changed since `recentSinceMs`, so a
 * finished paper-sized run is read in the time it takes to list its folders.
 */
export async function readEpisodeFolders(
  runDirectory: string,
  recentSinceMs: number,
): Promise<EpisodeFolder[]> {
  const parents: string[] = [runFiles.episodes];
  for (const name of await entryNames(join(runDirectory, runFiles.evaluation))) {
    parents.push(evaluationPath(name, 'episodes'));
  }
  const folders: EpisodeFolder[] = [];
  for (const parent of parents) {
    for (const id of await entryNames(join(runDirectory, parent), { hidden: true })) {
      if (id === STAGING) {
        for (const attempt of await entryNames(join(runDirectory, parent, STAGING))) {
          for (const staged of await entryNames(join(runDirectory, parent, STAGING, attempt))) {
            const folder = await readFolder(
              runDirectory,
              join(parent, STAGING, attempt, staged),
              staged,
              true,
              recentSinceMs,
            );
            if (folder) folders.push(folder);
          }
        }
        continue;
      }
      // Another hidden name is a temporary folder, never an episode.
      if (id.startsWith('.')) continue;
      const folder = await readFolder(runDirectory, join(parent, id), id, false, recentSinceMs);
      if (folder) folders.push(folder);
    }
  }
  return folders;
}

async function readFolder(
  runDirectory: string,
  dir: string,
  id: string,
  staged: boolean,
  recentSinceMs: number,
): Promise<EpisodeFolder | undefined> {
  const absolute = join(runDirectory, dir);
  const [record, logStat, openStat, folderStat] = await Promise.all([
    readRecord(join(absolute, episodeFiles.record)),
    stat(join(absolute, episodeFiles.proxyLog)).catch(() => undefined),
    stat(join(absolute, 'requests-open.json')).catch(() => undefined),
    stat(absolute).catch(() => undefined),
  ]);
  if (!folderStat?.isDirectory()) return undefined;
  const lastActivityMs = Math.max(logStat?.mtimeMs ?? 0, openStat?.mtimeMs ?? 0, folderStat.mtimeMs);
  const finished = record !== undefined;
  const log = !finished || lastActivityMs >= recentSinceMs ? await readCallLog(absolute) : null;
  return {
    id,
    dir,
    staged,
    finished,
    status: record?.status ?? null,
    failure: record?.failure ?? null,
    lastActivityMs,
    log,
  };
}

/** The few fields of `episode.json` status needs; a damaged record reads as a failure saying so. */
async function readRecord(path: string): Promise<{ status: string; failure: string | null } | undefined> {
  const text = await readOptional(path);
  if (text === undefined) return undefined;
  try {
    const record = JSON.parse(text) as {
      status?: unknown;
      failure?: { kind?: unknown; detail?: unknown } | null;
    };
    const failure = record.failure
      ? `${String(record.failure.kind)}: ${String(record.failure.detail)}`
      : null;
    return { status: typeof record.status === 'string' ? record.status : 'unknown', failure };
  } catch {
    return { status: 'failure', failure: `${episodeFiles.record} does not parse` };
  }
}
