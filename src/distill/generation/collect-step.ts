import { basename, join, relative } from 'node:path';

import { taskDataSeed } from '../../config/data-seeds.js';
import { EpisodeRecord } from '../../records/episode-record.js';
import { scanJudgeDirectedText } from '../../judge/judge-directed-scan.js';
import { runEpisode, type EpisodeOptions } from '../../episode/run-episode.js';
import { outageGateFor, runEpisodeThroughOutages } from '../../search/outage-gate.js';
import { episodePath, outerLoopFiles, runFiles } from '../../store/run-paths.js';
import { recordWorkPlan } from '../../store/work-plan.js';
import { workflowHash } from '../../workflow/render.js';
import { collectChampionRuns } from '../collect.js';
import type { GenerationContext, GenerationTask } from './generation-context.js';
import { CollectionRecord } from '../../records/generation-records.js';

/**
 * The champion workflow run `runs` times with the teacher directive, on the task's data seed, as one step: episodes
 * live at `episodes/<generation>-distill-<task>-<index>`, and `runEpisode` skips a finished episode directory, so a
 * collection interrupted half-way redoes only the episodes that had not finished. A single-agent task
 * (`singleAgentTask`) runs the bare task without the \`agent\` tool instead, at
 * `episodes/<generation>-single-agent-distill-<task>-<index>`. Each episode is checked against the budgets as it would
 * start and its spending journaled once it has run (`context.spending`); a spent budget stops the collection, which
 * resumes with the episodes that had not finished.
 */
export async function collectStep(
  context: GenerationContext,
  task: GenerationTask,
  onEpisodeFinished?: () => void,
): Promise<CollectionRecord> {
  const { run, settings, executor } = context;
  const file = join(task.base, outerLoopFiles.collection);
  const prefix = task.singleAgent
    ? `${context.generation}-single-agent-distill-${task.id}`
    : `${context.generation}-distill-${task.id}`;
  await recordWorkPlan(
    run.directory,
    task.base,
    { collect: 1, fit: 1, select: 1 },
    { folder: runFiles.episodes, idPrefix: `${prefix}-`, planned: settings.collection.runs },
  );
  return run.step(
    `${task.base}/collect`,
    async () => {
      const outages = outageGateFor(executor, settings.outages, run.path(runFiles.outages));
      let collection;
      try {
        collection = await collectChampionRuns({
          episode: {
            ...settings.episode,
            taskDir: task.task.dir,
            // Single-agent: no team design to follow and no teacher directive about delegating.
            workflow: task.singleAgent ? undefined : task.championWorkflow,
            teacher: !task.singleAgent,
            singleAgent: task.singleAgent ?? false,
            model: executor.model,
            baseUrl: executor.baseUrl,
            apiKey: executor.apiKey,
            dataSeed: taskDataSeed(settings.dataSeeds, task.id),
            hiddenDirectories: context.hiddenDirectories,
          },
          outDir: run.path(runFiles.episodes),
          prefix,
          runs: settings.collection.runs,
          needed: settings.collection.needed,
          maxTopUps: settings.collection.maxTopUps,
          firstSeed: settings.seed,
          concurrency: settings.concurrency.episodes,
          runEpisode: async (options: EpisodeOptions) => {
            const stepKey = `${task.base}/collect/${basename(options.outDir)}`;
            const result = await runEpisodeThroughOutages(
              outages,
              { id: basename(options.outDir), outDir: options.outDir },
              () => {
                // Checked as it would start, its slot held: a budget spent meanwhile refuses it (exit 3).
                context.spending.beforeWork('executor');
                return context.episodes
                  ? context.episodes.run({ stepKey, apiKeyEnv: executor.apiKeyEnv, options })
                  : runEpisode(options);
              },
            );
            await context.spending.episode(stepKey, result.record);
            return result;
          },
          onEpisodeFinished: () => onEpisodeFinished?.(),
        });
        // An outage past its budget stops the collection, which is then not done: the same command resumes it.
        await outages.ready();
      } finally {
        await outages.close();
      }
      const episodes = [];
      for (const episode of collection.episodes) {
        const record =
          episode.status === 'error'
            ? undefined
            : await EpisodeRecord.readIfPresent(episodePath(episode.dir, 'record'));
        episodes.push({
          episodeId: episode.episodeId,
          dir: relative(run.directory, episode.dir),
          seed: episode.seed,
          status: episode.status,
          reason: episode.reason,
          tampered: record?.integrity.tampered ?? false,
          ...(episode.status === 'error'
            ? {}
            : {
                judgeDirected: await scanJudgeDirectedText(task.task, episodePath(episode.dir, 'workspace')),
              }),
        });
      }
      const summary: CollectionRecord = {
        generation: context.generation,
        task: task.id,
        workflowHash: task.singleAgent ? null : workflowHash(task.championWorkflow),
        ...(task.singleAgent ? { condition: 'single-agent' as const } : {}),
        episodes,
        successes: collection.successes,
        topUps: collection.topUps,
        enough: collection.enough,
      };
      await CollectionRecord.write(run.path(file), summary);
      return summary;
    },
    { output: CollectionRecord.schema, produces: [file] },
  );
}
