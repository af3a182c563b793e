import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';

import { EpisodeRecord } from '../records/episode-record.js';
import { UserError } from '../errors.js';
import { episodePath } from '../store/run-paths.js';
import { BareTasks } from './bare-tasks.js';
import { buildTrainingData, type BuildTrainingDataOptions } from './build-training-data.js';
import { loadChatTemplateModel } from './chat-template-model.js';
import { readEpisodeSource, type EpisodeSource } from './episode-source.js';
import { JsonLinesWriter } from './json-lines-writer.js';
import { checkTrainingTokenizer } from './tokenizer-family.js';
import { TrainingDataStats } from '../records/training-data-stats.js';
import { DataSplit, STATS_FILE, trainingDataFiles } from '../records/training-records.js';

export interface WriteTrainingDataOptions {
  /** Episode directories and the split each goes to. */
  episodes: Array<{ dir: string; split: DataSplit }>;
  outDir: string;
  /** Where tasks are found by id: task folders or suite folders (default: the folder each episode recorded). */
  taskDirectories?: string[];
  /** A model directory with `tokenizer.json` and `tokenizer_config.json` (default: Qwen3's). */
  modelDirectory?: string;
  /**
   * The model whose tokenizer the data must have: the name it is served under or its hub id (default: the model
   * each episode recorded). A trained generation is served under a name of the run's: give the base model's.
   */
  servedModel?: string;
  /** Build with a tokenizer not known to be the served model's (see `checkTrainingTokenizer`). */
  allowTokenizerMismatch?: boolean;
  limits?: BuildTrainingDataOptions['limits'];
  mode?: BuildTrainingDataOptions['mode'];
  verify?: BuildTrainingDataOptions['verify'];
  /** Use episodes that did not succeed (default: refuse them). */
  allowFailed?: boolean;
  /** Called as each episode is read. */
  onEpisode?: (dir: string, index: number, total: number) => void;
}

/**
 * `mass data build`: reads the episodes one at a time and writes, per split, the windows (`<split>.windows.jsonl`),
 * their metadata alone (`<split>.index.jsonl`, for the sampler) and the conversations in TRL's format
 * (`<split>.conversations.jsonl`); `stats.json` is written last, so its presence means the build finished.
 */
export async function writeTrainingData(options: WriteTrainingDataOptions): Promise<TrainingDataStats> {
  const directories = options.episodes.map((episode) => path.resolve(episode.dir));
  const repeated = directories.find((directory, index) => directories.indexOf(directory) !== index);
  if (repeated) throw new UserError(`${repeated} is given twice; each episode belongs to one split, once`);
  const tokenizer = await checkTrainingTokenizer({
    modelDirectory: options.modelDirectory,
    servedModels:
      options.servedModel !== undefined
        ? [options.servedModel]
        : await Promise.all(options.episodes.map((episode) => recordedModel(episode.dir))),
    allowMismatch: options.allowTokenizerMismatch,
  });
  const model = await loadChatTemplateModel(options.modelDirectory);
  const bareTasks = new BareTasks(options.taskDirectories);
  await mkdir(options.outDir, { recursive: true });
  await rm(path.join(options.outDir, STATS_FILE), { force: true });

  const writers = Object.fromEntries(
    DataSplit.options.map((split) => {
      const files = trainingDataFiles(split);
      return [
        split,
        {
          windows: new JsonLinesWriter(path.join(options.outDir, files.windows)),
          index: new JsonLinesWriter(path.join(options.outDir, files.index)),
          conversations: new JsonLinesWriter(path.join(options.outDir, files.conversations)),
        },
      ];
    }),
  ) as Record<DataSplit, Record<'windows' | 'index' | 'conversations', JsonLinesWriter>>;

  async function* sources(): AsyncGenerator<EpisodeSource> {
    for (const [index, episode] of options.episodes.entries()) {
      options.onEpisode?.(episode.dir, index, options.episodes.length);
      yield await readEpisodeSource(episode.dir, episode.split, {
        bareTasks,
        allowFailed: options.allowFailed,
      });
    }
  }

  let stats: TrainingDataStats;
  try {
    stats = await buildTrainingData(sources(), {
      model,
      limits: options.limits,
      mode: options.mode,
      verify: options.verify,
      sink: {
        window: async (window) => {
          const { input_ids: _inputIds, labels: _labels, ...summary } = window;
          await writers[window.split].windows.write(window);
          await writers[window.split].index.write(summary);
        },
        conversation: (conversation) =>
          writers[conversation.metadata.split].conversations.write(conversation),
      },
    });
  } finally {
    for (const split of Object.values(writers)) {
      for (const writer of Object.values(split)) await writer.close();
    }
  }
  stats = { ...stats, tokenizer };
  await TrainingDataStats.write(path.join(options.outDir, STATS_FILE), stats);
  return stats;
}

async function recordedModel(episodeDirectory: string): Promise<string> {
  return (await EpisodeRecord.read(episodePath(episodeDirectory, 'record'))).model;
}
