import { z } from 'zod';

import { findStructuredObjects } from './structured-text.js';
import { Workflow, workflowIssues, type WorkflowIssue } from './workflow.js';

/** Expected failure of model output is a value: the errors say what to fix, `raw` keeps what was read. */
export type WorkflowParse = { ok: true; workflow: Workflow } | { ok: false; errors: string[]; raw: string };

const MAX_ERRORS = 20;

/** Enough shape for the structural rules to explain a draft whose fields fail the schema. */
const LooseStructure = z.object({
  agents: z.array(z.object({ id: z.string(), kind: z.string(), contract: z.unknown().optional() })),
  hops: z.array(z.object({ from: z.string(), to: z.string() })),
});

/**
 * Reads a workflow from what an optimizer (or a person) wrote: a value already decoded, or text holding JSON or
 * YAML, bare, in a Markdown fence or surrounded by prose. An object whose only interesting member is `design` or
 * `workflow` is unwrapped. Validates with the schema and the structural rules; every problem is one line that
 * starts with `source` and names the field.
 */
export function parseWorkflow(input: unknown, source: string): WorkflowParse {
  if (typeof input !== 'string') {
    const result = validateWorkflow(unwrap(input), source);
    return result.ok ? result : { ...result, raw: safeStringify(input) };
  }
  const search = findStructuredObjects(input);
  if (search.candidates.length === 0) {
    return {
      ok: false,
      errors: [`${source}: no JSON or YAML object found (${search.failures.slice(0, 3).join('; ')})`],
      raw: input,
    };
  }
  let best: { errors: string[]; looksLikeWorkflow: boolean } | undefined;
  for (const candidate of search.candidates) {
    const value = unwrap(candidate.value);
    const result = validateWorkflow(value, source);
    if (result.ok) return result;
    const looksLikeWorkflow = isRecord(value) && Array.isArray(value.agents);
    if (
      !best ||
      (looksLikeWorkflow && !best.looksLikeWorkflow) ||
      (looksLikeWorkflow === best.looksLikeWorkflow && result.errors.length < best.errors.length)
    ) {
      best = { errors: result.errors, looksLikeWorkflow };
    }
  }
  return { ok: false, errors: best!.errors, raw: input };
}

/** Validates a decoded value as a workflow; the errors of a failure are ready to show to a person or a model. */
export function validateWorkflow(value: unknown, source: string): WorkflowParse {
  const parsed = Workflow.safeParse(value);
  if (parsed.success) return { ok: true, workflow: parsed.data };
  const issues: WorkflowIssue[] = parsed.error.issues.map((issue) => ({
    path: issue.path.filter((segment): segment is string | number => typeof segment !== 'symbol'),
    message: issue.message,
  }));
  // The schema stops before the structural rules when a field has the wrong type; run them on what can be read.
  const loose = LooseStructure.safeParse(value);
  if (loose.success) {
    const known = new Set(issues.map(issueKey));
    for (const issue of workflowIssues(loose.data)) if (!known.has(issueKey(issue))) issues.push(issue);
  }
  const errors = issues.slice(0, MAX_ERRORS).map((issue) => describeIssue(source, issue));
  if (issues.length > MAX_ERRORS) errors.push(`${source}: … and ${issues.length - MAX_ERRORS} more problems`);
  return { ok: false, errors, raw: safeStringify(value) };
}

function issueKey(issue: WorkflowIssue): string {
  return `${issue.path.join('.')}\u0000${issue.message}`;
}

function describeIssue(source: string, issue: WorkflowIssue): string {
  return issue.path.length === 0
    ? `${source}: ${issue.message}`
    : `${source}: ${fieldPath(issue.path)}: ${issue.message}`;
}

/** `agents[2].contract.fields[0].type` */
export function fieldPath(path: ReadonlyArray<string | number>): string {
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else text += text === '' ? segment : `.${segment}`;
  }
  return text;
}

function unwrap(value: unknown): unknown {
  if (!isRecord(value) || 'agents' in value) return value;
  for (const key of ['design', 'workflow']) {
    const inner = value[key];
    if (isRecord(inner) && 'agents' in inner) return inner;
  }
  return value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}
