import { z } from 'zod';

import { parseAllowEntry } from '../proxy/egress-allow-list.js';

/** One entry of `environment.network.allow` (see `parseAllowEntry`). */
export const NetworkAllowEntry = z.string().superRefine((entry, context) => {
  const parsed = parseAllowEntry(entry);
  if (!parsed.ok) context.addIssue({ code: 'custom', message: parsed.error });
});

/** What an episode's agents may reach beyond the model: nothing (`false`), or the hosts of an allow-list. */
export const TaskNetwork = z.union([
  z.literal(false),
  z
    .object({
      allow: z.array(NetworkAllowEntry).min(1, 'list at least one host, or write network: false').max(256),
    })
    .strict(),
]);
export type TaskNetwork = z.infer<typeof TaskNetwork>;
