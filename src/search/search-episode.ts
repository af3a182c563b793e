import { relative } from 'node:path';

import { taskDataSeed } from '../config/data-seeds.js';
import { executionMetadata } from '../optimizer/execution-metadata.js';
import { localEpisodeBackend } from '../queue/episode-backend.js';
import type { TeamDesign } from '../workflow/workflow.js';
import { runEpisodeThroughOutages } from './outage-gate.js';
import { SearchEpisode } from './search-records.js';
import type { TaskSearchState } from './task-search-state.js';

/**
 * The run of one version (`design`; null: the bare-task reference) as a step of the run store, in
 * `episodes/<generation>-<task>-<version>/`. An episode lost to the model server being down says nothing about the
 * design: it is redone once the server answers (`runEpisodeThroughOutages`).
 */
export async function searchEpisode(
  state: TaskSearchState,
  version: string,
  design: TeamDesign | null,
): Promise<SearchEpisode> {
  const { context, id, base } = state;
  const { run, generation, executor, settings } = context;
  const report = context.onProgress;
  let ran = false;
  const episode = await run.step(
    `${base}/${version}/episode`,
    async () => {
      ran = true;
      const episodeId = `${generation}-${id}-${version}`;
      const outDir = run.path('episodes', episodeId);
      const { record } = await runEpisodeThroughOutages(
        context.outages,
        { id: episodeId, outDir },
        async () => {
          const release = await context.episodeSlots.acquire();
          report?.({ kind: 'episode-started', task: id, version });
          try {
            return await (context.episodes ?? localEpisodeBackend).run({
              stepKey: `${base}/${version}/episode`,
              apiKeyEnv: executor.apiKeyEnv,
              options: {
                ...settings.episode,
                taskDir: state.task.dir,
                workflow: design ?? undefined,
                model: executor.model,
                baseUrl: executor.baseUrl,
                apiKey: executor.apiKey,
                seed: settings.seed,
                dataSeed: taskDataSeed(settings.dataSeeds, id),
                outDir,
                hiddenDirectories: context.hiddenDirectories,
              },
            });
          } finally {
            release();
          }
        },
        (error) => report?.({ kind: 'lost-to-outage', task: id, version, what: 'episode', error }),
      );
      report?.({ kind: 'episode-finished', task: id, version, ok: record.status === 'success' });
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
      version,
      ok: episode.status === 'success',
      resumed: true,
    });
  }
  return episode;
}
