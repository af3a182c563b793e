import { z } from 'zod';

export const DeliverableStatus = z.enum(['ok', 'missing', 'empty', 'invalid', 'incomplete']);
export type DeliverableStatus = z.infer<typeof DeliverableStatus>;

/** The preflight of one deliverable of the task manifest, as the judge and the stored judgment see it. */
export const DeliverableCheck = z.object({
  id: z.string(),
  kind: z.string(),
  /** The manifest's path or glob. */
  path: z.string(),
  /** Workspace files that matched (one for a plain path). */
  matched: z.array(z.string()),
  status: DeliverableStatus,
  problems: z.array(z.string()),
  facts: z.array(z.string()),
});
export type DeliverableCheck = z.infer<typeof DeliverableCheck>;

/** One protected file of the task, checked now and, when an episode record exists, as it reported the run. */
export const ProtectedFileFinding = z.object({
  path: z.string(),
  /** The workspace file now, hashed against the task's original; a symbolic link in its place counts as replaced. */
  status: z.enum(['unchanged', 'modified', 'replaced-by-link', 'missing']),
  /** What the episode record saw at the end of the run; null without a record. */
  episode: z.enum(['unchanged', 'changed', 'not-recorded']).nullable(),
});
export type ProtectedFileFinding = z.infer<typeof ProtectedFileFinding>;

export const BundleSection = z.object({
  name: z.string(),
  tokens: z.number().int(),
  budgetTokens: z.number().int(),
  itemsShown: z.number().int(),
  itemsNotShown: z.number().int(),
  truncated: z.boolean(),
});

/** What a bundle held, for the stored judgment: sizes, cuts, and the mechanical findings in structured form. */
export const BundleSummary = z.object({
  source: z.enum(['episode', 'workspace']),
  tokenizer: z.string(),
  tokens: z.number().int(),
  budgetTokens: z.number().int(),
  /** The factor the section budgets were scaled by to fit the total (1: no scaling). */
  budgetScale: z.number(),
  sections: z.array(BundleSection),
  files: z.object({
    total: z.number().int(),
    bytes: z.number().int(),
    skippedFolders: z.number().int(),
    walkLimitReached: z.boolean(),
  }),
  preflight: z.array(DeliverableCheck),
  integrity: z.object({
    tampered: z.boolean(),
    findings: z.array(ProtectedFileFinding),
    links: z.number().int(),
  }),
  /**
   * Text of the agents in the bundle that addresses the judge or imitates the bundle, as shown marked: the markers and
   * the characters inside them (absent in records written before it was marked).
   */
  judgeDirected: z.object({ marks: z.number().int(), characters: z.number().int() }).optional(),
  episode: z
    .object({
      status: z.enum(['success', 'failure']).nullable(),
      failureKind: z.string().nullable(),
      delegations: z.number().int().nullable(),
      modelCalls: z.number().int().nullable(),
      problem: z.string().nullable(),
    })
    .nullable(),
});
export type BundleSummary = z.infer<typeof BundleSummary>;
