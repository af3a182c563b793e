import { basename, join, relative } from 'node:path';

import { z } from 'zod';

import type { RunConfig } from '../config/run-config.js';
import { SystemError } from '../errors.js';
import { distillGeneration, distillSettings } from '../distill/generation/index.js';
import type { DistillProgressEvent } from '../distill/generation/generation-records.js';
import { checkTrainingTokenizer } from '../distill/tokenizer-family.js';
import { loadTokenCounter } from '../model/token-counter.js';
import { dataSeeds } from '../config/data-seeds.js';
import { fitRunConfig } from '../config/context-fit.js';
import { searchRoles, searchSettings, searchTaskDirs } from '../search/search-config.js';
import type { SearchProgressEvent } from '../search/search-progress.js';
import { episodeBackendFor } from '../queue/backend-from-config.js';
import { searchTasks } from '../search/search-tasks.js';
import type { Run } from '../store/run-store.js';
import { BASE_TOY_WEIGHTS, saveToyWeights } from '../testing/toy-model/weights.js';
import { TrainingMetrics } from '../train/training-metrics.js';
import { ModelRegistry } from '../train/registry.js';
import type { Trainer } from '../train/trainer.js';
import { checkDeploymentFits } from './deployment-check.js';
import { serveGeneration } from './generation-serving.js';
import { RsiSummaryRecord, type GenerationSummary, type RsiSummary } from './rsi-records.js';
import { trainerFromConfig } from './trainer-from-config.js';
import { trainingTokenizer } from './training-tokenizer.js';

export type RsiProgressEvent =
  | {
      kind: 'stage';
      generation: string;
      stage: 'serve' | 'search' | 'distill' | 'train' | 'done';
      detail?: string;
    }
  | { kind: 'search'; generation: string; event: SearchProgressEvent }
  | { kind: 'distill'; generation: string; event: DistillProgressEvent };

export interface RunGenerationsOptions {
  run: Run<RunConfig>;
  /** The task suite folder (the configuration's `suite`, resolved). */
  suiteDir: string;
  /** Generations to train: L0 plays the roles first, the run ends with L<rounds> trained and deployed. */
  rounds: number;
  /** Default: the configuration's trainer. */
  trainer?: Trainer;
  onProgress?: (event: RsiProgressEvent) => void;
}

const TrainStepOutput = z.object({
  adapterPath: z.string().optional(),
  mergedPath: z.string().optional(),
  metrics: TrainingMetrics,
  logFile: z.string(),
});

/**
 * The whole loop (MASS.md §4): for each generation, the model searches workflows for every task (the inner loop),
 * runs each winning champion many times, ranks those runs with its own judgments, and the best become training data;
 * the next generation is trained on them and deployed, and plays every role in the next round. Every stage is a step
 * of the run directory: killed at any moment, the loop resumes where it stopped.
 */
export async function runGenerations(options: RunGenerationsOptions): Promise<RsiSummary> {
  const { run, rounds } = options;
  const { config } = run;
  checkDeploymentFits(config, rounds);
  const report = options.onProgress ?? (() => {});
  const trainer = options.trainer ?? trainerFromConfig(config);
  const registry = await ModelRegistry.open(run.directory);
  const taskDirs = await searchTaskDirs(options.suiteDir, config.tasks, dataSeeds(config));
  // Refused before any work when the training data's tokenizer cannot be the model's.
  const baseTokenizer = await trainingTokenizer(config, registry, 'L0');
  await checkTrainingTokenizer({
    modelDirectory: baseTokenizer.modelDirectory,
    servedModels: [baseTokenizer.servedModel],
    allowMismatch: baseTokenizer.allowTokenizerMismatch,
  });
  if (!registry.get('L0')) await registerBase(run, registry);
  const tokenCounter = await loadTokenCounter(baseTokenizer.modelDirectory);

  const generations: GenerationSummary[] = [];
  for (let round = 0; round < rounds; round++) {
    const name = `L${round}`;
    const generation = registry.require(name);
    report({ kind: 'stage', generation: name, stage: 'serve', detail: generation.servedAs });
    const served = await serveGeneration({ config, runDirectory: run.directory, registry, generation });
    let summary: GenerationSummary;
    let dataset: string | null = null;
    const episodes = episodeBackendFor(config, run.directory);
    try {
      // Each generation's served context: the budgets fitted to it, or refused before any episode.
      const fitted = await fitRunConfig(config, served.endpoints, taskDirs, tokenCounter);
      const roles = searchRoles(fitted, served.endpoints);
      report({ kind: 'stage', generation: name, stage: 'search' });
      const search = await searchTasks({
        run,
        generation: name,
        taskDirs,
        concurrency: config.concurrency,
        ...roles,
        settings: searchSettings(fitted),
        tokenCounter,
        hiddenDirectories: [run.directory],
        episodes,
        onProgress: (event) => report({ kind: 'search', generation: name, event }),
      });
      if (search.outage) throw new SystemError(`generation ${name}: the search stopped: ${search.outage}`);
      if (search.failures.length > 0) {
        throw new SystemError(
          `generation ${name}: ${search.failures.length} task search(es) stopped: ${search.failures
            .map((failure) => `${failure.taskDir}: ${failure.error}`)
            .join('; ')}`,
        );
      }
      const winners = search.results.filter((result) => result.beatsReference && result.championDesign);
      summary = {
        generation: name,
        servedAs: generation.servedAs,
        tasks: search.results.map((result) => ({
          task: result.task,
          champion: result.champion,
          beatsReference: result.beatsReference,
        })),
        dataset: null,
        trained: null,
      };
      if (winners.length === 0) {
        generations.push(summary);
        report({
          kind: 'stage',
          generation: name,
          stage: 'done',
          detail: 'no search beat its reference: no data',
        });
        break;
      }
      report({ kind: 'stage', generation: name, stage: 'distill' });
      const distilled = await distillGeneration({
        run,
        generation: name,
        tasks: winners.map((result) => ({
          // A task's id is its folder's name.
          taskDir: taskDirs.find((dir) => basename(dir) === result.task)!,
          championWorkflow: result.championDesign!,
        })),
        executor: roles.executor,
        judge: roles.judge,
        settings: distillSettings(fitted),
        tokenCounter,
        ...(await trainingTokenizer(config, registry, name)),
        hiddenDirectories: [run.directory],
        episodes,
        onProgress: (event) => report({ kind: 'distill', generation: name, event }),
      });
      dataset = distilled.dataset.path;
      const { train, validation } = distilled.dataset.stats.splits;
      summary.dataset = {
        dir: distilled.dataset.dir,
        trainEpisodes: train.episodes,
        validationEpisodes: validation.episodes,
        trainWindows: train.total.windows,
        supervisedTokens: train.total.supervisedTokens,
      };
    } finally {
      await episodes.close();
      await served.close();
    }

    const next = `L${round + 1}`;
    report({ kind: 'stage', generation: next, stage: 'train', detail: trainer.kind });
    const trained = await run.step(
      `rsi/${next}/train`,
      async () =>
        trainer.train({
          dataset: dataset!,
          parent: generation,
          outDir: run.path('train', next),
          seed: config.seed + round,
          hyper: config.rsi.hyperparameters,
        }),
      { output: TrainStepOutput, dir: join('train', next) },
    );
    if (!registry.get(next)) {
      await registry.addTrained({
        name: next,
        parent: name,
        datasetId: relative(run.directory, dataset!),
        servedAs: servedName(config, next),
        result: trained,
      });
    }
    summary.trained = { generation: next, servedAs: servedName(config, next), metrics: trained.metrics };
    generations.push(summary);
    report({ kind: 'stage', generation: name, stage: 'done' });
  }

  // The last generation trained is deployed, so that it answers under its name when the loop ends.
  const last = registry.latest()!;
  if (last.parent !== null && config.roles.executor.provider !== 'toy') {
    report({ kind: 'stage', generation: last.name, stage: 'serve', detail: last.servedAs });
    await (
      await serveGeneration({ config, runDirectory: run.directory, registry, generation: last })
    ).close();
  }
  const summary: RsiSummary = {
    run: run.name,
    rounds,
    generations,
    registry: registry.list().map((generation) => ({
      name: generation.name,
      parent: generation.parent,
      servedAs: generation.servedAs,
      datasetId: generation.datasetId,
    })),
  };
  await RsiSummaryRecord.write(run.path('rsi-summary.json'), summary);
  return summary;
}

/** L0, the base model: the configured model, or for the toy model its base weights written into the run. */
async function registerBase(run: Run<RunConfig>, registry: ModelRegistry): Promise<void> {
  const { config } = run;
  const { executor } = config.roles;
  let model = config.rsi.baseModel ?? executor.model;
  if (executor.provider === 'toy') {
    model = run.path('train', 'L0', 'toy-weights.json');
    await saveToyWeights(model, BASE_TOY_WEIGHTS);
  }
  await registry.addBase({ model, servedAs: executor.model });
}

/** The name a trained generation is served under: `rsi.servedAs` with `{run}` and `{generation}` filled in. */
export function servedName(config: RunConfig, generation: string): string {
  return config.rsi.servedAs.replaceAll('{run}', config.name).replaceAll('{generation}', generation);
}
