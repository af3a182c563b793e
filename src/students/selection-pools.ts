import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { CollectionRecord } from '../records/generation-records.js';
import { SINGLE_AGENT_FOLDER } from '../store/run-paths.js';
import { Selection } from '../records/selection.js';
import { UserError } from '../errors.js';
import { DATASET_FOLDER, distillTaskPath, outerLoopFiles } from '../store/run-paths.js';
import type { SelectedEpisode, SelectionPools } from './student-datasets.js';

/** The round's selected episodes, team and single-agent, training and validation, with their ranks and directories. */
export async function selectionPools(runDirectory: string, generation: string): Promise<SelectionPools> {
  const distillDir = join(runDirectory, 'distill', generation);
  if (!existsSync(distillDir)) {
    throw new UserError(
      `${runDirectory}: no outer loop for generation ${generation} (distill/${generation}/ is missing)`,
    );
  }
  const pools = { team: [], single: [], teamValidation: [], singleValidation: [] } as {
    [Pool in keyof SelectionPools]: SelectedEpisode[];
  };
  for (const entry of (await readdir(distillDir, { withFileTypes: true })).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    if (!entry.isDirectory() || entry.name === DATASET_FOLDER) continue;
    const task = entry.name;
    const team = await selected(runDirectory, distillTaskPath(generation, task), task);
    const single = await selected(runDirectory, distillTaskPath(generation, task, SINGLE_AGENT_FOLDER), task);
    pools.team.push(...team.train);
    pools.teamValidation.push(...team.validation);
    pools.single.push(...single.train);
    pools.singleValidation.push(...single.validation);
  }
  return pools;
}

async function selected(
  runDirectory: string,
  folder: string,
  task: string,
): Promise<{ train: SelectedEpisode[]; validation: SelectedEpisode[] }> {
  const selectionFile = join(runDirectory, folder, outerLoopFiles.selection);
  if (!existsSync(selectionFile)) return { train: [], validation: [] };
  const selection = Selection.parse(JSON.parse(await readFile(selectionFile, 'utf8')));
  const collection = await CollectionRecord.read(join(runDirectory, folder, outerLoopFiles.collection));
  const dirOf = new Map(collection.episodes.map((episode) => [episode.episodeId, episode.dir]));
  const rankOf = new Map(selection.decisions.map((decision) => [decision.episodeId, decision.rank]));
  const episodes = (ids: readonly string[]) =>
    ids.map((episodeId) => ({
      episodeId,
      task,
      dir: dirOf.get(episodeId)!,
      rank: rankOf.get(episodeId) ?? Number.MAX_SAFE_INTEGER,
    }));
  return { train: episodes(selection.train), validation: episodes(selection.validation) };
}
