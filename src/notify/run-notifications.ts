import { join } from 'node:path';

import type { RunConfig } from '../config/run-config.js';
import { BudgetExhaustedError, onBudgetExhausted } from '../cost/budget-exhausted.js';
import { errorMessage } from '../errors.js';
import { Notifier } from './notifier.js';
import type { CommandRunner } from './run-command.js';

/** Where a run records how its notifications went. */
export const NOTIFICATIONS_FILE = 'notifications.jsonl';

/** The environment variables that hold the run's keys: every endpoint's `apiKeyEnv`. */
function keyNames(config: RunConfig): string[] {
  const { roles, evaluation } = config;
  const endpoints = [
    roles.executor,
    roles.judge,
    roles.optimizer,
    ...(evaluation?.judges ?? []),
    ...(evaluation?.models ?? []).map((model) => model.endpoint),
  ];
  return endpoints.flatMap((endpoint) => (endpoint?.apiKeyEnv ? [endpoint.apiKeyEnv] : []));
}

/**
 * A command's notifications (`notify` in the configuration): `stageFinished` as its stages end, and, around its
 * work, `run-failed` when it throws and `budget-exhausted` when a budget stops it (the cost accounting announces it).
 */
export class RunNotifications {
  private readonly notifier: Notifier;
  private readonly run: { name: string; directory: string };

  constructor(
    config: RunConfig,
    runDirectory: string,
    private readonly command: string,
    /** Starts the notification command (a test gives one of its own). */
    runCommand?: CommandRunner,
  ) {
    this.notifier = new Notifier(
      config.notify,
      join(runDirectory, NOTIFICATIONS_FILE),
      keyNames(config),
      runCommand,
    );
    this.run = { name: config.name, directory: runDirectory };
  }

  stageFinished(stage: string, generation?: string, detail?: string): void {
    this.notifier.notify({
      kind: 'stage-finished',
      run: this.run,
      command: this.command,
      stage,
      ...(generation === undefined ? {} : { generation }),
      ...(detail === undefined ? {} : { detail }),
    });
  }

  /** Runs `work`, telling of a failure or an exhausted budget, and waits for the notifications before returning. */
  async around<T>(work: () => Promise<T>): Promise<T> {
    const unsubscribe = onBudgetExhausted((event) =>
      this.notifier.notify({
        kind: 'budget-exhausted',
        run: this.run,
        command: this.command,
        stage: event.stage,
        detail: `${event.budget} ran out`,
        budget: { ...event },
      }),
    );
    try {
      return await work();
    } catch (error) {
      // A budget that ran out was told of as such when it did: the command stops cleanly, it did not fail.
      if (!(error instanceof BudgetExhaustedError)) {
        this.notifier.notify({
          kind: 'run-failed',
          run: this.run,
          command: this.command,
          detail: errorMessage(error),
        });
      }
      throw error;
    } finally {
      unsubscribe();
      await this.notifier.settle();
    }
  }
}
