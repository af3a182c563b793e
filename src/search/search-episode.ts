import { relative } from 'node:path';

import { taskDataSeed } from '../config/data-seeds.js';
import { executionMetadata } from '../optimizer/execution-metadata.js';
import { localEpisodeBackend } from '../queue/episode-backend.js';
import type { TeamDesign } from '../workflow/workflow.js';
import { runEpisodeThroughOutages } from './outage-gate.js';
import { repeatRunLabel, repeatSeed, repeatStepBase } from './repeat-runs.js';
import { SearchEpisode } from '../records/search-records.js';
import type { TaskSearchState } from './task-search-state.js';

/**
 * The run of one version (`design`; null: the bare-task reference) as a step of the run store, in
 * `episodes/<generation>-<task>-<version>/`. An episode lost to the model server being down says nothing about the
 * design: it is redone once the server answers (`runEpisodeThroughOutages`). `repeat` (1, 2 …) makes it a rerun of
 * the unchanged design with its own seed, measured beside the search (`repeat-runs.ts`): `<version>-r<repeat>`.
 */
export async function searchEpisode(
  state: TaskSearchState,
  version: string,
  design: TeamDesign | null,
  repeat = 0,
): Promise<SearchEpisode> {
  const { context, id, base } = state;
  const { run, generation, executor, settings } = context;
  const report = context.onProgress;
  const label = repeatRunLabel(version, repeat);
  const stepKey =
    repeat === 0 ? `${base}/${version}/episode` : `${repeatStepBase(base, version, repeat)}/episode`;
  let ran = false;
  const episode = await run.step(
    stepKey,
    async () => {
      ran = true;
      const episodeId = `${generation}-${id}-${label}`;
      const outDir = run.path('episodes', episodeId);
      const { record } = await runEpisodeThroughOutages(
        context.outages,
        { id: episodeId, outDir },
        async () => {
          const release = await context.episodeSlots.acquire();
          try {
            // Checked as it would start: an episode waiting for a slot may find a budget spent meanwhile.
            context.spending.beforeWork('executor');
            report?.({ kind: 'episode-started', task: id, version: label });
            return await (context.episodes ?? localEpisodeBackend).run({
              stepKey,
              apiKeyEnv: executor.apiKeyEnv,
              options: {
                ...settings.episode,
                taskDir: state.task.dir,
                workflow: design ?? undefined,
                model: executor.model,
                baseUrl: executor.baseUrl,
                apiKey: executor.apiKey,
                seed: repeatSeed(settings.seed, repeat),
                dataSeed: taskDataSeed(settings.dataSeeds, id),
                outDir,
                hiddenDirectories: context.hiddenDirectories,
              },
            });
          } finally {
            release();
          }
        },
        (error) => report?.({ kind: 'lost-to-outage', task: id, version: label, what: 'episode', error }),
      );
      await context.spending.episode(stepKey, record);
      report?.({ kind: 'episode-finished', task: id, version: label, ok: record.status === 'success' });
      return {
        episodeId,
        dir: relative(run.directory, outDir),
        status: record.status,
        reason: record.failure
          ? `${record.failure.kind}${record.failure.cause ? ` (${record.failure.cause})` : ''}: ${record.failure.detail}`
          : null,
        execution: executionMetadata(record),
      };
    },
    { output: SearchEpisode },
  );
  if (!ran) {
    report?.({
      kind: 'episode-finished',
      task: id,
      version: label,
      ok: episode.status === 'success',
      resumed: true,
    });
  }
  return episode;
}
