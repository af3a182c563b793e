import { z } from 'zod';

import { parseAllowEntry } from '../allow-entry.js';

/** One network allow-list entry (see `parseAllowEntry`): a task's `environment.network.allow`, a run's destinations. */
export const NetworkAllowEntry = z.string().superRefine((entry, context) => {
  const parsed = parseAllowEntry(entry);
  if (!parsed.ok) context.addIssue({ code: 'custom', message: parsed.error });
});

/**
 * What the run lets episodes reach beyond what their tasks list. A task's allow-list names hosts; whether one of
 * them may lead to a loopback, private, link-local or other non-public address (the host's model server, its Redis,
 * a cloud's metadata endpoint, a lab's database) is the run's decision alone, made here.
 */
export const NetworkSettings = z
  .object({
    privateDestinations: z
      .array(NetworkAllowEntry)
      .max(256)
      .default([])
      .describe(
        'destinations whose non-public address episodes may reach, written as allow-list entries (10.0.0.5:8000, db.lab.internal, *.lab.internal:5432; without a port every port); a task must still list the host and port (a public benchmark task under mass benchmark --internet public lists none: every public host is open to it, and this alone opens the rest). Default none: loopback, private, link-local and metadata addresses are refused',
      ),
  })
  .strict();
export type NetworkSettings = z.output<typeof NetworkSettings>;
