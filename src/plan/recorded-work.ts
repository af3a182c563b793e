import { join } from 'node:path';

import { z } from 'zod';

import { CollectionRecord } from '../records/generation-records.js';
import { PairwiseJudgmentRecord } from '../records/judgment-record.js';
import { TaskSearchRecord } from '../records/search-records.js';
import { readValidJsonLines } from '../store/json-lines.js';
import {
  distillTaskPath,
  evaluationPath,
  outerLoopFiles,
  runFiles,
  searchTaskPath,
  searchVersionFiles,
} from '../store/run-paths.js';
import { emptyStage, type StageWork } from './plan-types.js';
import { folderNames, namesIn } from './run-folders.js';

/** What a run's records say each stage did: the same figures a plan predicts, counted from the files. */
export async function recordedWork(runDirectory: string): Promise<StageWork[]> {
  const stages: StageWork[] = [];
  for (const generation of await folderNames(join(runDirectory, runFiles.search))) {
    stages.push(await recordedSearch(runDirectory, generation));
  }
  for (const generation of await folderNames(join(runDirectory, runFiles.distill))) {
    stages.push(...(await recordedDistill(runDirectory, generation)));
  }
  for (const name of await folderNames(join(runDirectory, runFiles.evaluation))) {
    stages.push(await recordedEvaluation(runDirectory, name));
  }
  return stages;
}

async function recordedSearch(runDirectory: string, generation: string): Promise<StageWork> {
  const work = emptyStage('search', generation);
  for (const task of await folderNames(join(runDirectory, runFiles.search, generation))) {
    const base = join(runDirectory, searchTaskPath(generation, task));
    const result = await TaskSearchRecord.readIfPresent(join(base, 'result.json'));
    if (result) work.episodes.count += result.counts.episodes;
    for (const version of await folderNames(base)) {
      const versionDir = join(base, version);
      const files = await namesIn(versionDir);
      if (files.includes(searchVersionFiles.optimizer)) work.optimizerCalls.count++;
      if (
        !result &&
        (await namesIn(join(runDirectory, runFiles.episodes))).includes(`${generation}-${task}-${version}`)
      ) {
        work.episodes.count++;
      }
      await countJudgments(join(versionDir, searchVersionFiles.judgments), work);
    }
  }
  return settle(work);
}

async function recordedDistill(runDirectory: string, generation: string): Promise<StageWork[]> {
  const collection = emptyStage('collection', generation);
  const tournament = emptyStage('tournament', generation);
  for (const task of await folderNames(join(runDirectory, runFiles.distill, generation))) {
    const base = join(runDirectory, distillTaskPath(generation, task));
    for (const dir of [base, join(base, 'single-agent')]) {
      const record = await CollectionRecord.readIfPresent(join(dir, outerLoopFiles.collection));
      if (record) collection.episodes.count += record.episodes.length;
      await countJudgments(join(dir, outerLoopFiles.judgments), tournament);
    }
  }
  return [settle(collection), settle(tournament)];
}

const Row = z.object({ key: z.string() });

async function recordedEvaluation(runDirectory: string, name: string): Promise<StageWork> {
  const work = emptyStage('evaluation', null);
  const base = join(runDirectory, evaluationPath(name));
  work.episodes.count = (await folderNames(join(base, 'episodes'))).length;
  const { values } = await readValidJsonLines(join(base, 'judgments.jsonl'), Row, {});
  work.judgeCalls.count = values.length;
  work.judgments.count = new Set(values.map((row) => row.key)).size;
  return settle(work);
}

/** Each judgment record of a folder: one judgment, and a judge call per order it was judged in. */
async function countJudgments(folder: string, work: StageWork): Promise<void> {
  for (const file of (await namesIn(folder)).filter((entry) => entry.endsWith('.json'))) {
    const record = await PairwiseJudgmentRecord.read(join(folder, file));
    work.judgments.count++;
    work.judgeCalls.count += record.judgments.length;
  }
}

function settle(work: StageWork): StageWork {
  for (const count of [work.episodes, work.judgments, work.judgeCalls, work.optimizerCalls])
    count.upTo = count.count;
  return work;
}
