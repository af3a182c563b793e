import { z } from 'zod';

import { RelativePath } from './manifest.js';

/** `suite.yaml`: optional; names a suite and lists folders of shared oracle code that are withheld like `oracle/`. */
export const SuiteManifest = z
  .object({
    $schema: z.string().optional(),
    schemaVersion: z.literal(1),
    name: z.string().min(1),
    description: z.string().min(1).optional(),
    /** Suite-level folders (e.g. shared grading code) that must never reach a workspace or a prompt. */
    withheld: z.array(RelativePath).default([]),
  })
  .strict();
export type SuiteManifest = z.infer<typeof SuiteManifest>;
