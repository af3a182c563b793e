import { z } from 'zod';

import { RelativePath } from './manifest.js';

/**
 * `suite.yaml`: optional; names a suite, lists folders of shared oracle code that are withheld like `oracle/`, and may
 * give the suite's own teacher directive.
 */
export const SuiteManifest = z
  .object({
    $schema: z.string().optional(),
    schemaVersion: z.literal(1),
    name: z.string().min(1),
    description: z.string().min(1).optional(),
    /** Suite-level folders (e.g. shared grading code) that must never reach a workspace or a prompt. */
    withheld: z.array(RelativePath).default([]),
    /**
     * The directive appended to the team's prompt while collecting training data, in place of this project's own:
     * a Markdown file relative to the suite folder (an imported suite carries the official one).
     */
    teacherDirective: z.object({ file: RelativePath }).strict().optional(),
  })
  .strict();
export type SuiteManifest = z.infer<typeof SuiteManifest>;
