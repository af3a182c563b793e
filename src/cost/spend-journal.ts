import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

import { z } from 'zod';

import { ROLES } from '../config/endpoint.js';
import { SPEND_STAGES } from '../config/prices.js';
import { CallCost } from '../model/types.js';
import { readValidJsonLines } from '../store/json-lines.js';

/** The run's spending journal, at the run directory's root: one row per billed call or finished episode. */
export const SPENDING_FILE = 'spending.jsonl';

/**
 * One row of `spending.jsonl`: what one billed model call (a judge's or optimizer's) or one finished episode (all
 * of its team's calls) spent, where in the run. Written as the spending happens, so a command stopped midway and run
 * again counts what was spent before, even on work that was lost and redone. Rows with the same `key` are one spend
 * (an episode's row is written again when a resumed command finds it finished): the last one counts.
 */
export const SpendRow = z.object({
  schemaVersion: z.literal(1),
  kind: z.literal('spend'),
  key: z.string().min(1),
  at: z.string(),
  stage: z.enum(SPEND_STAGES),
  /** The generation (`L0`) or evaluation (`default`) the spending belongs to. */
  label: z.string(),
  role: z.enum(ROLES),
  model: z.string(),
  calls: z.number().int().nonnegative(),
  promptTokens: z.number().int().nonnegative(),
  completionTokens: z.number().int().nonnegative(),
  /** Null when neither the provider reported a cost nor the endpoint has prices. */
  cost: CallCost.nullable(),
});
export type SpendRow = z.infer<typeof SpendRow>;

/** The rows of a spending journal; none for a missing file. A line a killed writer left unfinished is skipped. */
export async function readSpending(file: string): Promise<SpendRow[]> {
  return (await readValidJsonLines(file, SpendRow)).values;
}

/** Appends one row (one short line, written whole by one append). */
export async function appendSpending(file: string, row: SpendRow): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, `${JSON.stringify(row)}\n`);
}
