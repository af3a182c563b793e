import { basename } from 'node:path';

import type { Command } from 'commander';

import { fitRunConfig } from '../../config/context-fit.js';
import { UserError } from '../../errors.js';
import { distillGeneration, distillSettings } from '../../distill/generation/index.js';
import { checkTrainingTokenizer } from '../../distill/tokenizer-family.js';
import { loadTokenCounter } from '../../model/token-counter.js';
import { episodeBackendFor } from '../../queue/backend-from-config.js';
import type { EpisodeBackend } from '../../queue/episode-backend.js';
import { serveConfiguredModel, type ServedGeneration } from '../../rsi/generation-serving.js';
import { trainingTokenizer } from '../../rsi/training-tokenizer.js';
import { dataSeeds } from '../../config/data-seeds.js';
import { searchRoles, searchTaskDirs } from '../../search/search-config.js';
import { TaskSearchRecord } from '../../search/search-records.js';
import { ModelRegistry } from '../../train/registry.js';
import { openConfiguredRun } from '../configured-run.js';
import { RsiProgressDisplay } from '../rsi-progress-display.js';

interface DistillFlags {
  config: string;
  runs: string;
  generation: string;
  json?: boolean;
}

export function registerDistill(program: Command): void {
  program
    .command('distill')
    .description(
      'The outer loop’s data after `mass search`: each winning champion run many times, a tournament, Bradley–Terry, selection, training data',
    )
    .requiredOption('--config <file>', 'the configuration the search ran with')
    .option('--runs <dir>', 'the folder holding run directories; the run is <dir>/<name>/', 'runs')
    .option(
      '--generation <label>',
      'the generation whose search results are used and whose model plays',
      'L0',
    )
    .option('--json', 'print the result as JSON')
    .action(async (flags: DistillFlags) => {
      const { run, suiteDir } = await openConfiguredRun({
        configFile: flags.config,
        runsDirectory: flags.runs,
        command: 'mass distill',
      });
      let served: ServedGeneration | undefined;
      let episodes: EpisodeBackend | undefined;
      try {
        const { config } = run;
        const winners = [];
        for (const taskDir of await searchTaskDirs(suiteDir, config.tasks, dataSeeds(config))) {
          const file = run.path('search', flags.generation, basename(taskDir), 'result.json');
          const result = await TaskSearchRecord.readIfPresent(file);
          if (!result) {
            throw new UserError(
              `${file} is missing: search task ${basename(taskDir)} first (mass search --config ${flags.config})`,
            );
          }
          if (result.beatsReference && result.championDesign) {
            winners.push({ taskDir, championWorkflow: result.championDesign });
          }
        }
        if (winners.length === 0) {
          throw new UserError(
            `no search of generation ${flags.generation} beat its reference: there is nothing to distil`,
          );
        }
        const tokenizer = await trainingTokenizer(
          config,
          await ModelRegistry.open(run.directory),
          flags.generation,
        );
        // Refused before any episode when the training data's tokenizer cannot be the model's.
        await checkTrainingTokenizer({
          modelDirectory: tokenizer.modelDirectory,
          servedModels: [tokenizer.servedModel],
          allowMismatch: tokenizer.allowTokenizerMismatch,
        });
        // The toy model is served by this process; other models are used where they are.
        served = await serveConfiguredModel(config);
        const tokenCounter = await loadTokenCounter(tokenizer.modelDirectory);
        const fitted = await fitRunConfig(
          config,
          served.endpoints,
          winners.map((winner) => winner.taskDir),
          tokenCounter,
        );
        const roles = searchRoles(fitted, served.endpoints);
        const display = new RsiProgressDisplay(winners.length * config.distill.runs);
        const result = await distillGeneration({
          run,
          generation: flags.generation,
          tasks: winners,
          executor: roles.executor,
          judge: roles.judge,
          settings: distillSettings(fitted),
          tokenCounter,
          ...tokenizer,
          hiddenDirectories: [run.directory],
          episodes: (episodes = episodeBackendFor(config, run.directory)),
          onProgress: (event) => display.onEvent({ kind: 'distill', generation: flags.generation, event }),
        });
        if (flags.json) {
          console.log(JSON.stringify(result, null, 2));
          return;
        }
        for (const task of result.perTask) {
          console.log(
            `${task.task}: ${task.collection.successes}/${task.collection.episodes.length} champion runs succeeded, ${task.matches.length} matches; train ${task.selection.train.join(', ')}; validation ${task.selection.validation.join(', ')}`,
          );
        }
        const { train, validation } = result.dataset.stats.splits;
        console.log(
          `Training data: ${result.dataset.path} (${train.total.windows} train windows, ${train.total.supervisedTokens} supervised tokens; ${validation.total.windows} validation windows)`,
        );
      } finally {
        await episodes?.close();
        await served?.close();
        run.close();
      }
    });
}
