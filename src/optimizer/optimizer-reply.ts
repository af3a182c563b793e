import { z } from 'zod';

import { fieldPath, parseWorkflow } from '../workflow/parse-workflow.js';
import { findStructuredObjects } from '../workflow/structured-text.js';
import { diffWorkflows, type WorkflowDiff } from '../workflow/workflow-diff.js';
import type { TeamDesign } from '../workflow/workflow.js';
import type { WorkflowProposal } from '../records/optimizer-call.js';

/** A list entry the model may write as a sentence or as a small object (`{"agent": …, "change": …}`); kept as text. */
const TextItem = z.union([
  z.string().trim().min(1),
  z.record(z.string(), z.unknown()).transform((object) =>
    Object.entries(object)
      .map(([key, value]) => `${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`)
      .join('; '),
  ),
]);
const Text = z.union([
  z.string().trim().min(1),
  z
    .array(z.string().trim().min(1))
    .min(1)
    .transform((items) => items.join(' ')),
]);

/** The optimizer's reply as the model writes it; `design` is validated separately, as a workflow. */
export const OptimizerReply = z.object({
  design: z.unknown().refine((value) => value !== undefined, 'the complete new workflow is required'),
  changes: z.array(TextItem).min(1),
  why: Text,
  evidence_used: z.array(TextItem).min(1),
  expected_impact: Text,
  verification_checks: z.array(TextItem).min(1),
});

export type ReplyParse =
  { ok: true; proposal: WorkflowProposal; diff: WorkflowDiff } | { ok: false; errors: string[]; raw: string };

/**
 * Reads an optimizer reply: finds the JSON object (fenced, bare or in prose), checks its members and the design,
 * and refuses a design identical to `current` (a proposal must change something). When the reply holds several
 * objects, the one that validates wins; otherwise the errors of the one closest to a reply are returned. The design
 * must be a complete `Workflow` whatever `current` is: free text and drafts are a task's v0 only.
 */
export function parseOptimizerReply(text: string, current: TeamDesign): ReplyParse {
  const search = findStructuredObjects(text);
  if (search.candidates.length === 0) {
    const reasons = search.failures.slice(0, 3).join('; ');
    return {
      ok: false,
      errors: [`no JSON object found in the reply${reasons ? ` (${reasons})` : ''}`],
      raw: text,
    };
  }
  let best: { errors: string[]; hasDesign: boolean } | undefined;
  for (const candidate of search.candidates) {
    const result = readReply(candidate.value, current);
    if (result.ok) return result;
    const hasDesign = 'design' in candidate.value;
    if (
      !best ||
      (hasDesign && !best.hasDesign) ||
      (hasDesign === best.hasDesign && result.errors.length < best.errors.length)
    ) {
      best = { errors: result.errors, hasDesign };
    }
  }
  return { ok: false, errors: best!.errors, raw: text };
}

function readReply(value: Record<string, unknown>, current: TeamDesign): ReplyParse {
  const errors: string[] = [];
  const reply = OptimizerReply.safeParse(value);
  if (!reply.success) {
    for (const issue of reply.error.issues) {
      const path = issue.path.filter((segment): segment is string | number => typeof segment !== 'symbol');
      errors.push(`${fieldPath(path) || '(the reply)'}: ${issue.message}`);
    }
  }
  const design = 'design' in value ? parseWorkflow(value.design, 'design') : undefined;
  if (design && !design.ok) errors.push(...design.errors);
  if (errors.length > 0 || !reply.success || !design?.ok) {
    return { ok: false, errors, raw: JSON.stringify(value) };
  }
  const diff = diffWorkflows(current, design.workflow);
  if (diff.identical) {
    return {
      ok: false,
      errors: ['design: identical to the current design; change at least one thing the evidence points to'],
      raw: JSON.stringify(value),
    };
  }
  return {
    ok: true,
    diff,
    proposal: {
      design: design.workflow,
      changes: reply.data.changes,
      why: reply.data.why,
      evidenceUsed: reply.data.evidence_used,
      expectedImpact: reply.data.expected_impact,
      verificationChecks: reply.data.verification_checks,
    },
  };
}
