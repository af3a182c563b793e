import { z } from 'zod';

/**
 * Host paths in the training data. A sandboxed episode's agents see their workspace at `/workspace` and their home
 * at `/home/agent`, wherever the run lives. An episode run without a sandbox, or before the sandbox fixed those
 * paths, saw the host's (`<run>/episodes/<id>/workspace`, `<id>/home`, and the harness's own forms of them: the
 * project folder named after the working directory, its hash, the home relative to the workspace). The builder
 * replaces each with what a sandboxed agent would have seen, so that no training conversation depends on where a run
 * lived, and records every replacement it made.
 */

export const HostPathRewrite = z.object({
  episode: z.string(),
  from: z.string(),
  to: z.string(),
  /** Occurrences replaced in the episode's conversations. */
  occurrences: z.number().int().positive(),
});
export type HostPathRewrite = z.infer<typeof HostPathRewrite>;
