import { basename } from 'node:path';

import { UserError } from '../../errors.js';
import { RunNotifications } from '../../notify/run-notifications.js';
import { distillGeneration, distillSettings, type DistillTask } from '../../distill/generation/index.js';
import type { ServedGeneration } from '../../train/model-host.js';
import { TaskSearchRecord } from '../../records/search-records.js';
import { searchResultPath } from '../../store/run-paths.js';
import { openRunSession } from '../../session/run-session.js';
import { RsiProgressDisplay } from '../rsi-progress-display.js';

interface DistillFlags {
  config: string;
  runs: string;
  generation: string;
  json?: boolean;
}

export async function distillAction(flags: DistillFlags): Promise<void> {
  const session = await openRunSession({
    configFile: flags.config,
    runsDirectory: flags.runs,
    command: 'mass distill',
  });
  const { run, config } = session;
  let served: ServedGeneration | undefined;
  try {
    const winners: DistillTask[] = [];
    for (const taskDir of await session.taskDirs()) {
      const file = run.path(searchResultPath(flags.generation, basename(taskDir)));
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
    // Refused before any episode when the training data's tokenizer cannot be the model's.
    const stage = await session.stage({
      generation: flags.generation,
      taskDirs: winners.map((winner) => winner.taskDir),
      serve: 'base',
      makesTrainingData: true,
    });
    served = stage.served;
    const { fitted, tokenCounter, tokenizer, roles } = stage;
    const display = new RsiProgressDisplay(winners.length * config.distill.runs);
    // The run's `notify` command hears of a budget that stops the distillation, a failure, and its end.
    const notifications = new RunNotifications(config, run.directory, 'mass distill');
    const result = await notifications.around(async () => {
      const distilled = await distillGeneration({
        run,
        generation: flags.generation,
        tasks: winners,
        executor: roles.executor,
        judge: roles.judge,
        settings: distillSettings(fitted),
        tokenCounter,
        ...tokenizer,
        hiddenDirectories: [run.directory],
        episodes: session.episodes,
        onProgress: (event) => display.onEvent({ kind: 'distill', generation: flags.generation, event }),
      });
      notifications.stageFinished('distill', flags.generation);
      return distilled;
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
    await served?.close();
    await session.close();
  }
}
