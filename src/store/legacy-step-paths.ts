import { existsSync } from 'node:fs';
import { join, normalize, sep } from 'node:path';

import type { RunDatabase } from './database.js';
import { insideRoot, relativizePaths } from './run-relative-paths.js';

/**
 * Step outputs stored before paths were kept relative to the run (rows without `output_paths`) hold absolute paths of
 * wherever the run was then. They are rewritten once, when the run is opened: the paths under the run's directory, or
 * under the directory it was copied from, become relative, so the copy reads its own files.
 *
 * Where a run was copied from is not written anywhere in an old database: it is recognised from the stored paths
 * themselves. For a path `/old/runs/r1/train/L1/merged`, the longest ending that exists in the run now
 * (`train/L1/merged`) gives the old location (`/old/runs/r1`); the location most paths agree on is taken.
 */
export function migrateLegacyStepPaths(database: RunDatabase, roots: readonly string[]): void {
  const rows = database
    .prepare('SELECT key, output_json FROM steps WHERE output_json IS NOT NULL AND output_paths IS NULL')
    .all() as Array<{ key: string; output_json: string }>;
  if (rows.length === 0) return;
  const outputs: Array<{ key: string; value: unknown }> = [];
  for (const row of rows) {
    try {
      outputs.push({ key: row.key, value: JSON.parse(row.output_json) as unknown });
    } catch {
      // Left as it is: reading the step reports it as damaged, with what to do.
    }
  }
  const oldRoot = formerRunDirectory(
    outputs
      .flatMap((output) => stringsOf(output.value))
      .filter((text) => insideRoot(text, roots) === undefined),
    roots[0]!,
  );
  const allRoots = oldRoot === undefined ? roots : [...roots, oldRoot];
  const update = database.prepare(
    'UPDATE steps SET output_json = :outputJson, output_paths = :outputPaths WHERE key = :key',
  );
  database.transaction(() => {
    for (const output of outputs) {
      const relative = relativizePaths(output.value, allRoots);
      update.run({
        key: output.key,
        outputJson: JSON.stringify(relative.value),
        outputPaths: JSON.stringify(relative.locations),
      });
    }
  })();
}

/** The directory the run was in when these absolute paths (none inside its present directory) were stored. */
function formerRunDirectory(paths: readonly string[], runDirectory: string): string | undefined {
  const votes = new Map<string, number>();
  for (const text of paths) {
    if (!text.startsWith(sep) || normalize(text) !== text) continue;
    const parts = text.split(sep).filter((part) => part !== '');
    // From the longest ending to the shortest; the prefix is never the file system's root.
    for (let cut = 1; cut < parts.length; cut++) {
      if (!existsSync(join(runDirectory, ...parts.slice(cut)))) continue;
      const prefix = sep + parts.slice(0, cut).join(sep);
      votes.set(prefix, (votes.get(prefix) ?? 0) + 1);
      break;
    }
  }
  let best: string | undefined;
  for (const [prefix, count] of votes) if (best === undefined || count > votes.get(best)!) best = prefix;
  return best;
}

function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsOf);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(stringsOf);
  return [];
}
