import { readdir } from 'node:fs/promises';

import type { Run } from '../store/run-store.js';
import { runFiles, searchNoisePath, searchRepeatsPath } from '../store/run-paths.js';
import { poolNoiseFigures } from '../records/noise-figures.js';
import { GenerationNoiseRecord, TaskRepeatsRecord, type GenerationNoise } from '../records/repeat-records.js';

/**
 * The search noise of a generation (`search/<generation>/noise.json`): the figures of every task whose reruns have
 * finished (`repeats.json`), pooled. Made from the tasks' records each time a search of the generation ends, so tasks
 * searched by separate commands (`--tasks`) are pooled together; null, and nothing written, when no task has any.
 */
export async function writeGenerationNoise(
  run: Run<unknown>,
  generation: string,
): Promise<GenerationNoise | null> {
  const tasks: GenerationNoise['tasks'] = [];
  for (const task of (await taskFolders(run.path(runFiles.search, generation))).sort()) {
    const repeats = await TaskRepeatsRecord.readIfPresent(run.path(searchRepeatsPath(generation, task)));
    if (repeats) tasks.push({ task, repeats: repeats.repeats, figures: repeats.figures });
  }
  if (tasks.length === 0) return null;
  const noise: GenerationNoise = {
    generation,
    tasks,
    figures: poolNoiseFigures(tasks.map((task) => task.figures)),
  };
  await GenerationNoiseRecord.write(run.path(searchNoisePath(generation)), noise);
  return noise;
}

async function taskFolders(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}
