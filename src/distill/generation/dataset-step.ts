import { UserError } from '../../errors.js';
import { datasetPath } from '../../store/run-paths.js';
import type { Selection } from '../../records/selection.js';
import { writeTrainingData, type WriteTrainingDataOptions } from '../write-training-data.js';
import type { GenerationContext, GenerationTask } from './generation-context.js';
import {
  DatasetEpisodesRecord,
  DatasetSummary,
  type CollectionRecord,
  type DatasetEpisode,
} from '../../records/generation-records.js';

export interface SelectedTask {
  task: GenerationTask;
  collection: CollectionRecord;
  selection: Selection;
}

/**
 * The training data of every task's selected episodes together, in `distill/<generation>/dataset/` (see
 * `writeTrainingData`; the orchestrator's workflow prompt is replaced by the bare task). The folder is the step's:
 * a half-written one is removed and built again.
 */
export async function datasetStep(
  context: GenerationContext,
  selected: readonly SelectedTask[],
  tokenizer: Pick<WriteTrainingDataOptions, 'modelDirectory' | 'servedModel' | 'allowTokenizerMismatch'>,
): Promise<DatasetSummary> {
  const { run, settings } = context;
  const dir = datasetPath(context.generation);
  const episodes = datasetEpisodes(selected);
  const summary = await run.step(
    `distill/${context.generation}/dataset`,
    async () => {
      const stats = await writeTrainingData({
        episodes: episodes.map((episode) => ({ dir: run.path(episode.dir), split: episode.split })),
        outDir: run.path(dir),
        taskDirectories: selected.map((entry) => entry.task.task.dir),
        ...tokenizer,
        limits: settings.windows,
      });
      await DatasetEpisodesRecord.write(run.path(dir, 'episodes.json'), {
        generation: context.generation,
        episodes,
      });
      return { dir, episodes, stats };
    },
    { output: DatasetSummary, dir },
  );
  // Selections are steps too, so the two differ only when the caller changed the generation's tasks.
  if (JSON.stringify(summary.episodes) !== JSON.stringify(episodes)) {
    throw new UserError(
      `generation ${context.generation}: the dataset in ${run.path(dir)} was built from other episodes than the ` +
        'tasks given now select (was the list of tasks changed?); delete that folder to build it again.',
    );
  }
  return summary;
}

function datasetEpisodes(selected: readonly SelectedTask[]): DatasetEpisode[] {
  return selected.flatMap(({ task, collection, selection }) => {
    const dirOf = new Map(collection.episodes.map((episode) => [episode.episodeId, episode.dir]));
    return [
      ...selection.train.map((episodeId) => ({ episodeId, split: 'train' as const })),
      ...selection.validation.map((episodeId) => ({ episodeId, split: 'validation' as const })),
    ].map(({ episodeId, split }) => ({ episodeId, task: task.id, split, dir: dirOf.get(episodeId)! }));
  });
}
