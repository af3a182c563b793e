import { basename, join, relative } from 'node:path';

import { z } from 'zod';

import type { RunConfig } from '../config/run-config.js';
import { lineageSetting } from '../config/rsi-settings.js';
import { SystemError, UserError } from '../errors.js';
import { distillGeneration, distillSettings } from '../distill/generation/index.js';
import type { DistillProgressEvent } from '../records/generation-records.js';
import { searchSettings } from '../search/search-config.js';
import type { RunSession } from '../session/run-session.js';
import type { SearchProgressEvent } from '../search/search-progress.js';
import { searchTasks } from '../search/search-tasks.js';
import type { Run } from '../store/run-store.js';
import { runFiles } from '../store/run-paths.js';
import { nextTraining } from '../train/lineage.js';
import type { ModelGeneration } from '../records/model-generation.js';
import { TrainingMetrics } from '../records/training-metrics.js';
import type { ModelRegistry } from '../records/registry.js';
import type { Trainer } from '../train/trainer.js';
import { RsiSummaryRecord, type GenerationSummary, type RsiSummary } from '../records/rsi-records.js';

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
  /** The run's session: its configuration, suite, model kind, registry and episode back-end. */
  session: RunSession;
  /** Generations to train: L0 plays the roles first, the run ends with L<rounds> trained and deployed. */
  rounds: number;
  /** Default: the trainer of the configuration's model kind. */
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
  const { session, rounds } = options;
  const { run, config, kind } = session;
  const { host } = kind;
  host.checkRounds(rounds);
  const report = options.onProgress ?? (() => {});
  const trainer = options.trainer ?? kind.trainer();
  const registry = await session.registry();
  const taskDirs = await session.taskDirs();
  // Refused before any work, the base registered included, when the training data's tokenizer cannot be the model's.
  await session.tokenizer('L0', true);
  if (!registry.get('L0')) {
    await registry.addBase({
      model: await host.baseWeights(run.directory),
      servedAs: config.roles.executor.model,
    });
  }

  const generations: GenerationSummary[] = [];
  for (let round = 0; round < rounds; round++) {
    const name = `L${round}`;
    const generation = registry.require(name);
    report({ kind: 'stage', generation: name, stage: 'serve', detail: generation.servedAs });
    // The tokenizer checked before anything runs, and the budgets fitted to the generation's served context.
    const { served, tokenizer, tokenCounter, fitted, roles } = await session.stage({
      generation: name,
      taskDirs,
      makesTrainingData: true,
    });
    let summary: GenerationSummary;
    let dataset: string | null = null;
    const { episodes } = session;
    try {
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
        budgets: config.budgets,
        executorPrices: config.roles.executor.prices,
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
        ...tokenizer,
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
      await served.close();
    }

    const next = `L${round + 1}`;
    report({ kind: 'stage', generation: next, stage: 'train', detail: trainer.kind });
    const trained = await trainGeneration({
      run,
      registry,
      trainer,
      parent: generation,
      dataset: dataset!,
      round,
      ...(host.duringTraining ? { duringTraining: host.duringTraining.bind(host) } : {}),
    });
    summary.trained = { generation: next, servedAs: trained.generation.servedAs, metrics: trained.metrics };
    generations.push(summary);
    report({ kind: 'stage', generation: name, stage: 'done' });
  }

  // The last generation trained is deployed, so that it answers under its name when the loop ends.
  const last = registry.latest()!;
  if (last.parent !== null) {
    report({ kind: 'stage', generation: last.name, stage: 'serve', detail: last.servedAs });
    await (await host.serve(last, registry, run.directory)).close();
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
  await RsiSummaryRecord.write(run.path(runFiles.rsiSummary), summary);
  return summary;
}

export interface TrainGenerationOptions {
  run: Run<RunConfig>;
  registry: ModelRegistry;
  trainer: Trainer;
  /** The generation trained from, L<round>. */
  parent: ModelGeneration;
  /** Its training data (`distill/L<round>/dataset`). */
  dataset: string;
  round: number;
  /** Runs the training (the model host's: a served model's vLLM may sleep meanwhile); default: as it is. */
  duringTraining?: <T>(work: () => Promise<T>) => Promise<T>;
}

/**
 * Trains the next generation, L<round + 1>, and registers it: the step `rsi/L<k>/train`, in `train/L<k>`, over the
 * weights and from the adapter that `rsi.lineage` names. A training killed or failed midway is redone from the resume
 * state it left there when its trainer `resumes` (the folder is kept and the trainer told to resume; a configuration
 * changed since then trains afresh), and from an emptied folder otherwise.
 */
export async function trainGeneration(
  options: TrainGenerationOptions,
): Promise<{ generation: ModelGeneration; metrics: TrainingMetrics }> {
  const { run, registry, trainer, parent, dataset, round } = options;
  const duringTraining = options.duringTraining ?? (<T>(work: () => Promise<T>) => work());
  const { config } = run;
  const next = `L${round + 1}`;
  const lineage = nextTraining(lineageSetting(config.rsi), registry, parent);
  const trained = await run.step(
    `rsi/${next}/train`,
    async ({ attempt }) => {
      const result = await duringTraining(() =>
        trainer.train({
          dataset,
          parent,
          base: lineage.base,
          initAdapter: lineage.initAdapter,
          outDir: run.path('train', next),
          seed: config.seed + round,
          hyper: config.rsi.hyperparameters,
          resume: attempt > 1,
          restartIfChanged: true,
        }),
      );
      if (lineage.adapterBase !== undefined && result.adapterPath === undefined) {
        throw new UserError(
          `rsi.lineage adapters: the ${trainer.kind} trainer left no adapter for ${next}, only merged weights, and ` +
            'each generation is served and trained on as an adapter: make the trainer leave its adapter ' +
            '(rsi.trainer.adapterPath for a command), or use rsi.lineage merged',
        );
      }
      return result;
    },
    { output: TrainStepOutput, dir: join('train', next), keepDirOnRedo: trainer.resumes === true },
  );
  const generation =
    registry.get(next) ??
    (await registry.addTrained({
      name: next,
      parent: parent.name,
      datasetId: relative(run.directory, dataset),
      servedAs: servedName(config, next),
      result: trained,
      adapterBase: lineage.adapterBase,
    }));
  return { generation, metrics: trained.metrics };
}

/** The name a trained generation is served under: `rsi.servedAs` with `{run}` and `{generation}` filled in. */
export function servedName(config: RunConfig, generation: string): string {
  return config.rsi.servedAs.replaceAll('{run}', config.name).replaceAll('{generation}', generation);
}
