import { createHash } from 'node:crypto';
import path from 'node:path';

import type { EpisodeRecord } from '../records/episode-record.js';
import { SANDBOX_HOME, SANDBOX_WORKSPACE } from '../episode/sandbox.js';
import type { Thread } from '../records/threads.js';
import type { EpisodeSource } from './episode-source.js';
import type { HostPathRewrite } from '../records/host-path-rewrite.js';

export interface PathReplacement {
  from: string;
  to: string;
}

/** Characters of a path name: a match must not continue one (`…/workspace2`, `/private/tmp/…` for `/tmp/…`). */
const PATH_CHARACTER = '[A-Za-z0-9._~+@%-]';
/** After a match: no more of the name, though a full stop that ends a sentence may follow (`…/workspace.`). */
const NAME_ENDS = `(?![A-Za-z0-9_~+@%-]|\\.${PATH_CHARACTER})`;

/**
 * What to replace in an episode's conversations: nothing for a sandboxed episode that recorded the fixed paths; the
 * recorded host paths of an unsandboxed one; for a record older than both, the `<dir>/<episode id>/workspace` and
 * `…/home` paths its threads show (the run may have been moved since, so the record's location says nothing).
 */
export function hostPathReplacements(record: EpisodeRecord, threads: readonly Thread[]): PathReplacement[] {
  const { workspacePath, homePath } = record.sandbox;
  const seen =
    workspacePath !== undefined
      ? [{ workspace: workspacePath, home: homePath ?? path.join(path.dirname(workspacePath), 'home') }]
      : episodeDirectoriesIn(JSON.stringify(threads), record.episodeId).map((directory) => ({
          workspace: `${directory}/workspace`,
          home: `${directory}/home`,
        }));
  return seen.flatMap(({ workspace, home }) => replacementsFor(workspace, home));
}

/** The episode's conversations with every replacement made, and what was replaced how often. */
export function rewriteHostPaths(episode: Pick<EpisodeSource, 'episodeId' | 'threads' | 'hostPaths'>): {
  threads: Thread[];
  rewrites: HostPathRewrite[];
} {
  const { episodeId, threads } = episode;
  const replacements = episode.hostPaths ?? [];
  if (replacements.length === 0) return { threads, rewrites: [] };
  const patterns = replacements.map((replacement) => ({
    ...replacement,
    pattern: pathPattern(replacement.from),
  }));
  const occurrences = new Map<string, number>();
  const rewrite = (text: string): string => {
    let result = text;
    for (const { from, to, pattern } of patterns) {
      result = result.replace(pattern, () => {
        occurrences.set(from, (occurrences.get(from) ?? 0) + 1);
        return to;
      });
    }
    return result;
  };
  const rewritten = threads.map((thread) => ({ ...thread, segments: mapStrings(thread.segments, rewrite) }));
  const rewrites = replacements.flatMap(({ from, to }) => {
    const count = occurrences.get(from) ?? 0;
    return count > 0 ? [{ episode: episodeId, from, to, occurrences: count }] : [];
  });
  return { threads: rewritten, rewrites };
}

function replacementsFor(workspace: string, home: string): PathReplacement[] {
  if (workspace === SANDBOX_WORKSPACE && home === SANDBOX_HOME) return [];
  const pairs: Array<[string, string]> = [
    [workspace, SANDBOX_WORKSPACE],
    [home, SANDBOX_HOME],
    // qwen-code keeps a project's files under `<home>/projects/<working directory, non-alphanumerics as ->` and
    // `<home>/tmp/<sha256 of the working directory>`, and names context files relative to the working directory.
    [projectFolderName(workspace), projectFolderName(SANDBOX_WORKSPACE)],
    [sha256(workspace), sha256(SANDBOX_WORKSPACE)],
    [path.relative(workspace, home), path.relative(SANDBOX_WORKSPACE, SANDBOX_HOME)],
  ];
  return pairs.filter(([from, to]) => from !== to && from !== '').map(([from, to]) => ({ from, to }));
}

/** Every `<dir>/<episodeId>` that the text names as the parent of a `workspace` or `home` folder. */
function episodeDirectoriesIn(text: string, episodeId: string): string[] {
  const pattern = new RegExp(
    `(?<!${PATH_CHARACTER}|/)((?:/${PATH_CHARACTER}+)*/${escapeRegExp(episodeId)})/(?:workspace|home)${NAME_ENDS}`,
    'g',
  );
  return [...new Set([...text.matchAll(pattern)].map((match) => match[1]!))];
}

/** A path (`/…`, `../…`) must not continue another one; a folder name (`-srv-…`, a hash) may follow a `/`. */
function pathPattern(from: string): RegExp {
  const before = /^[/.]/.test(from) ? `(?<!${PATH_CHARACTER}|/)` : `(?<!${PATH_CHARACTER})`;
  return new RegExp(`${before}${escapeRegExp(from)}${NAME_ENDS}`, 'g');
}

function projectFolderName(workingDirectory: string): string {
  return workingDirectory.replace(/[^a-zA-Z0-9]/g, '-');
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function mapStrings<T>(value: T, map: (text: string) => string): T {
  if (typeof value === 'string') return map(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => mapStrings(item, map)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapStrings(item, map)])) as T;
  }
  return value;
}
