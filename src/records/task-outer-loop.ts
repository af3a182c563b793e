import { join } from 'node:path';

import type { RunFiles } from '../store/run-files.js';
import { distillTaskPath, outerLoopFiles } from '../store/run-paths.js';
import { Selection } from './selection.js';
import { SINGLE_AGENT_FOLDER } from '../store/run-paths.js';
import {
  CollectionRecord,
  TaskRankingRecord,
  type CollectionRecord as Collection,
  type TaskRankingRecord as Ranking,
} from './generation-records.js';

/** A task's outer loop in one generation: whichever of its files exist. */
export interface TaskOuterLoop {
  generation: string;
  task: string;
  collection: Collection | undefined;
  ranking: Ranking | undefined;
  selection: Selection | undefined;
}

/** One task's outer loop in one generation: collection, ranking and selection, each as far as it got. */
export async function readTaskOuterLoop(
  files: RunFiles,
  generation: string,
  task: string,
): Promise<TaskOuterLoop> {
  const collection = await files.record(
    CollectionRecord,
    distillTaskPath(generation, task, outerLoopFiles.collection),
  );
  const ranking = await files.record(
    TaskRankingRecord,
    distillTaskPath(generation, task, outerLoopFiles.ranking),
    collection ? 'the tournament has not finished' : undefined,
  );
  const selection = await files.json(
    Selection,
    distillTaskPath(generation, task, outerLoopFiles.selection),
    ranking ? 'the selection has not been made yet' : undefined,
  );
  return { generation, task, collection, ranking, selection };
}

/**
 * A task's single-agent collection, ranking and selection (`distill/<generation>/<task>/single-agent/`), each as far
 * as it got, under the task's own name; undefined when its round collected none (`distill.singleAgentCollection`).
 */
export async function readSingleAgentOuterLoop(
  files: RunFiles,
  generation: string,
  task: string,
): Promise<TaskOuterLoop | undefined> {
  if (!(await files.folders(distillTaskPath(generation, task))).includes(SINGLE_AGENT_FOLDER))
    return undefined;
  const loop = await readTaskOuterLoop(files, generation, join(task, SINGLE_AGENT_FOLDER));
  return { ...loop, task };
}
