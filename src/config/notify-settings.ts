import { z } from 'zod';

import { durationSchema } from '../timer-duration.js';

/** The events a notification command may be run for. */
export const NOTIFY_EVENTS = ['stage-finished', 'run-failed', 'budget-exhausted'] as const;
export type NotifyEventKind = (typeof NOTIFY_EVENTS)[number];

/**
 * `notify`: a command of yours (mail, chat, a job scheduler) run when a stage finishes, a run fails or a budget runs
 * out, with the event as one JSON object on its standard input. It runs beside the work and never holds it up: it is
 * killed past its timeout, and its failures are recorded in the run's `notifications.jsonl`, never raised. It is
 * started with a bare environment (PATH, HOME, the locale): none of the run's keys.
 */
export const NotifySettings = z
  .object({
    command: z
      .array(z.string().min(1))
      .min(1, 'give the program and its arguments, e.g. [/usr/local/bin/notify-me, --channel, runs]')
      .describe(
        'the program and its arguments, e.g. [sh, -c, "mail -s mass me@example.org"]; no shell unless you name one',
      ),
    timeoutSeconds: durationSchema({ unit: 's' })
      .default(30)
      .describe('the longest it may run; then it is killed and the timeout recorded'),
    events: z
      .array(z.enum(NOTIFY_EVENTS))
      .min(1)
      .default([...NOTIFY_EVENTS])
      .describe('which events run it (default all): stage-finished, run-failed, budget-exhausted'),
  })
  .strict();
export type NotifySettings = z.infer<typeof NotifySettings>;
