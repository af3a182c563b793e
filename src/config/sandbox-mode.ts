import { z } from 'zod';

/**
 * Where an episode's harness runs (the configuration's `sandbox`, an episode's `sandbox`). `bubblewrap`: isolated
 * (`episode/sandbox-options.ts` says how). `unsandboxed` (the CLI's `--no-sandbox`): nothing is isolated, only the
 * limits and the process-tree kill apply, and opening the sandbox warns so.
 */
export const SandboxMode = z.enum(['bubblewrap', 'unsandboxed']);
export type SandboxMode = z.infer<typeof SandboxMode>;
