import { readFileSync } from 'node:fs';

import type { NotificationOutcome, Notifier, NotifyEvent } from '../../src/notify/notifier.js';

/**
 * The two events the notifier tests hand over, one right after the other: mass rsi's search of L0 finished, then the
 * run failed with `key` in its detail (which the command must get as `[redacted]`).
 */
export function notifySearchThenFailure(notifier: Notifier, run: NotifyEvent['run'], key: string): void {
  notifier.notify({ kind: 'stage-finished', run, command: 'mass rsi', stage: 'search', generation: 'L0' });
  notifier.notify({ kind: 'run-failed', run, command: 'mass rsi', detail: `refused key ${key}` });
}

/** The outcomes a notifier recorded in `file`, one JSON line each. */
export function readOutcomes(file: string): NotificationOutcome[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as NotificationOutcome);
}
