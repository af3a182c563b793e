import { z } from 'zod';

export const TokenizerCheckResult = z.object({
  /** The model directory and what its family was told from. */
  declared: z.string(),
  family: z.string().nullable(),
  served: z.array(z.object({ model: z.string(), family: z.string().nullable() })),
  /**
   * `same-family`: every served model's name is of the directory's family. `unverified`: a family is unknown, so
   * nothing could be compared. `mismatch-allowed`: the families differ, and the build was told to go on.
   */
  verdict: z.enum(['same-family', 'unverified', 'mismatch-allowed']),
});
export type TokenizerCheckResult = z.infer<typeof TokenizerCheckResult>;
