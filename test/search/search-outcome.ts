import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

import { TaskSearchRecord } from '../../src/records/search-records.js';

/**
 * What a task's search decided, without the figures that vary run to run (times, tokens): what two runs of the same
 * search (with and without faults, locally or through the queue) must agree on.
 */
export async function searchDecisions(run: string, task: string) {
  const result = await TaskSearchRecord.read(join(run, 'search', 'L0', task, 'result.json'));
  return {
    champion: result.champion,
    beatsReference: result.beatsReference,
    championHistory: result.championHistory,
    counts: result.counts,
    iterations: result.iterations.map((iteration) => ({
      version: iteration.version,
      episode: iteration.episode && { status: iteration.episode.status, reason: iteration.episode.reason },
      matches: iteration.decision?.matches.map(({ first, second, result, rationale }) => ({
        first,
        second,
        result,
        rationale,
      })),
    })),
  };
}

/** Every file under a folder, with a hash of its contents. */
export function fileHashes(root: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (folder: string) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else files[relative(root, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(root);
  return files;
}
