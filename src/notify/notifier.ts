import { appendFile } from 'node:fs/promises';

import type { NotifyEventKind, NotifySettings } from '../config/notify-settings.js';
import { durationMs } from '../timer-duration.js';
import { redactSecrets } from './redact-secrets.js';
import { runNotifyCommand, type CommandOutcome, type CommandRunner } from './run-command.js';

/** An event as the command reads it on its standard input. */
export interface NotifyEvent {
  schemaVersion: 1;
  kind: NotifyEventKind;
  at: string;
  run: { name: string; directory: string };
  command: string;
  /** `stage-finished`: `search`, `distill`, `train`, `serve`, `evaluation`, `benchmark`…; the generation when there is one. */
  stage?: string;
  generation?: string;
  /** A line about what happened: what the stage made, why the run failed, which budget ran out. */
  detail?: string;
  /** `budget-exhausted`: the budget's event as the cost accounting gives it. */
  budget?: Record<string, unknown>;
}

/** One line of `notifications.jsonl`: how a notification went. */
export interface NotificationOutcome extends CommandOutcome {
  at: string;
  event: NotifyEventKind;
  stage?: string;
  generation?: string;
}

/**
 * Runs the configuration's notification command for each event, beside the run: `notify` returns at once, the command
 * reads the event on its standard input (one event at a time, in order), is killed past its timeout, and how it went is appended to `outcomes` (the
 * run's `notifications.jsonl`). Nothing it does reaches the run: no exception, no wait beyond `settle`, which a command
 * calls before it exits so that no notification is cut off.
 */
export class Notifier {
  /** The notifications under way, one after another: the command sees the events in the order they happened. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly settings: NotifySettings | undefined,
    private readonly outcomes: string,
    /** Environment variable names whose values must never reach the command (the roles' `apiKeyEnv`). */
    private readonly secretNames: readonly string[] = [],
    /** Starts the command (a test gives one of its own). */
    private readonly runCommand: CommandRunner = runNotifyCommand,
  ) {}

  /** Whether the configuration runs a command for this kind of event. */
  wants(kind: NotifyEventKind): boolean {
    return this.settings !== undefined && this.settings.events.includes(kind);
  }

  notify(event: Omit<NotifyEvent, 'schemaVersion' | 'at'>): void {
    if (!this.wants(event.kind)) return;
    const full: NotifyEvent = { schemaVersion: 1, at: new Date().toISOString(), ...event };
    this.queue = this.queue
      .then(() => this.send(full))
      .catch(() => {
        // Recording the outcome failed too (the run folder gone): nothing more to do, and nothing to raise.
      });
  }

  /** Waits for the notifications under way, each bounded by the timeout. */
  async settle(): Promise<void> {
    let settled: Promise<void>;
    do {
      settled = this.queue;
      await settled;
    } while (settled !== this.queue);
  }

  private async send(event: NotifyEvent): Promise<void> {
    const settings = this.settings!;
    const redact = (text: string) => redactSecrets(text, this.secretNames);
    const outcome = await this.runCommand(
      settings.command,
      `${redact(JSON.stringify(event))}\n`,
      durationMs(settings.timeoutSeconds, 's'),
    );
    const line: NotificationOutcome = {
      at: new Date().toISOString(),
      event: event.kind,
      ...(event.stage === undefined ? {} : { stage: event.stage }),
      ...(event.generation === undefined ? {} : { generation: event.generation }),
      ...outcome,
      error: outcome.error === null ? null : redact(outcome.error),
      stderr: redact(outcome.stderr),
    };
    await appendFile(this.outcomes, `${JSON.stringify(line)}\n`);
  }
}
