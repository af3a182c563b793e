import { z } from 'zod';

/**
 * Which of a task's ranked episodes become training data: ranks 1..train for training and the next `validation`
 * ranks for validation (the paper: 15 and 1 of 18), disjoint. Only successful, untampered episodes are eligible:
 * a failed run or one that changed a protected file is never trained on, whatever the judge thought of it.
 */

export const SelectionReason = z.enum(['train', 'validation', 'below-cut', 'failed', 'tampered', 'unranked']);
export type SelectionReason = z.infer<typeof SelectionReason>;

export const Selection = z.object({
  schemaVersion: z.literal(1),
  train: z.array(z.string()),
  validation: z.array(z.string()),
  /** Every episode with its rank among the eligible ones (null when not eligible) and the reason for its place. */
  decisions: z.array(
    z.object({
      episodeId: z.string(),
      rank: z.number().int().positive().nullable(),
      reason: SelectionReason,
    }),
  ),
  /** Fewer eligible episodes than train + validation: the caller should top up (collect more) before training. */
  short: z.number().int().nonnegative(),
});
export type Selection = z.infer<typeof Selection>;
