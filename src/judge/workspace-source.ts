import { stat } from 'node:fs/promises';
import path from 'node:path';

import { EpisodeRecord } from '../records/episode-record.js';
import { UserError, errorMessage } from '../errors.js';
import { episodeFiles, episodePath } from '../store/run-paths.js';

/** Where a workspace to judge lives: an episode directory (`episode.json`, `workspace/`, logs) or a bare folder. */
export interface WorkspaceSource {
  kind: 'episode' | 'workspace';
  workspaceDir: string;
  /** The episode directory, for an episode. */
  episodeDir?: string;
  episode?: EpisodeRecord;
  /** Why an episode record that exists could not be used; the judge is told, the bundle is still built. */
  episodeProblem?: string;
}

/**
 * Accepts an episode directory or a plain workspace folder. A folder is an episode when it holds `episode.json`, or a
 * `workspace/` folder next to the episode's logs.
 */
export async function locateWorkspace(input: string): Promise<WorkspaceSource> {
  const dir = path.resolve(input);
  if (!(await isDirectory(dir))) {
    throw new UserError(`${input}: not a folder; pass an episode directory or a workspace folder`);
  }
  const recordPath = episodePath(dir, 'record');
  const hasRecord = await exists(recordPath);
  const hasWorkspace = await isDirectory(episodePath(dir, 'workspace'));
  const hasLogs = (await exists(episodePath(dir, 'threads'))) || (await exists(episodePath(dir, 'proxyLog')));
  if (!hasRecord && !(hasWorkspace && hasLogs)) return { kind: 'workspace', workspaceDir: dir };
  if (!hasWorkspace) {
    throw new UserError(`${input}: an episode directory without its workspace/ folder; nothing to judge`);
  }
  const source: WorkspaceSource = {
    kind: 'episode',
    workspaceDir: episodePath(dir, 'workspace'),
    episodeDir: dir,
  };
  if (hasRecord) {
    try {
      source.episode = await EpisodeRecord.read(recordPath);
    } catch (error) {
      // The judge must not see host paths (a folder name such as "reference" would give the game away).
      const reason = errorMessage(error).split('\n')[0]!.replaceAll(recordPath, episodeFiles.record);
      source.episodeProblem = `episode.json could not be read: ${reason}`;
    }
  } else source.episodeProblem = 'the episode has no episode.json (it did not finish)';
  return source;
}

async function isDirectory(dir: string): Promise<boolean> {
  return (await stat(dir).catch(() => undefined))?.isDirectory() ?? false;
}

async function exists(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined)) !== undefined;
}
