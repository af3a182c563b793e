import { z } from 'zod';

/**
 * How a verification ended: `scored` (a reward file was read), `no-reward` (test.sh exited with 0 without writing
 * one; an error, never a zero, as in Harbor), `setup-failed` (test.sh exited with an error before writing a reward:
 * its set-up, such as installing its test runner, failed before any test judged the agent's work), `bad-reward` (a
 * reward file that is not one float, or not a JSON object of numbers), `timeout` (killed at the task's verifier
 * timeout), `crashed` (test.sh ended by a signal or at a limit, whatever reward file it left, or the environment could
 * not run it).
 */
export const VerificationStatus = z.enum([
  'scored',
  'no-reward',
  'setup-failed',
  'bad-reward',
  'timeout',
  'crashed',
]);
export type VerificationStatus = z.infer<typeof VerificationStatus>;

export const Verification = z
  .object({
    status: VerificationStatus,
    /** The trial's reward: reward.txt's float, or reward.json's `reward` (or its only number); null unless scored. */
    reward: z.number().nullable(),
    /** Every number reward.json gave, by name; null for reward.txt or no reward. */
    rewards: z.record(z.string(), z.number()).nullable(),
    /** Which file the reward came from. */
    rewardFile: z.enum(['reward.txt', 'reward.json']).nullable(),
    detail: z.string().nullable(),
    exitCode: z.number().int().nullable(),
    wallSeconds: z.number(),
    /** The last lines test.sh printed (bounded), for the reader; never parsed. */
    stdoutTail: z.string(),
    stderrTail: z.string(),
    /** Entries of /logs/verifier not handed back (links, special files, past the hand-back's limits). */
    leftOut: z.array(z.object({ path: z.string(), reason: z.string() }).strict()),
  })
  .strict();
export type Verification = z.infer<typeof Verification>;
