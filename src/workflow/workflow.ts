import { z } from 'zod';

/**
 * The team workflow as data: agents (role, instruction, output contract) and hops between them.
 *
 * The optimizer writes every new version in this shape (`Workflow`, strict). A task's own v0 may be looser: free
 * text (`FreeTextWorkflow`, the official repository's form) or agents whose contracts or hops are not specified yet
 * (`DraftWorkflow`); `TeamDesign` is any of them, the type of every design a run holds. The checks that only concern
 * task manifests (the initial team's size) live in `src/tasks/manifest.ts`.
 */

export const WORKFLOW_SCHEMA_VERSION = 1;

const AgentId = z
  .string()
  .regex(/^[a-z][a-z0-9-]*$/, 'agent ids use lowercase letters, digits and hyphens, starting with a letter');

/** Text an agent reads (a role, an instruction, a description, a condition): empty or only spaces says nothing. */
const NonEmptyText = (what: string) => {
  const message = `${what} is empty: write it as non-empty text`;
  return z
    .string()
    .min(1, message)
    .refine((text) => text.trim() !== '', message);
};

const FieldName = z
  .string()
  .regex(
    /^[A-Za-z][A-Za-z0-9_]*$/,
    'contract field names are identifiers: letters, digits and underscores, starting with a letter',
  );

export const ContractFieldType = z.enum(['string', 'number', 'integer', 'boolean', 'path', 'list', 'object']);
export type ContractFieldType = z.infer<typeof ContractFieldType>;

/** A field nested inside an `object` field; one level of nesting is enough for reports such as `validation_report`. */
export const ContractLeafField = z
  .object({
    name: FieldName,
    type: ContractFieldType.exclude(['object']),
    description: NonEmptyText('the description'),
  })
  .strict();
export type ContractLeafField = z.infer<typeof ContractLeafField>;

export const ContractField = z
  .object({
    name: FieldName,
    type: ContractFieldType,
    description: NonEmptyText('the description'),
    fields: z.array(ContractLeafField).min(1).optional(),
  })
  .strict()
  .superRefine((field, context) => {
    if (field.type === 'object' && !field.fields) {
      context.addIssue({ code: 'custom', path: ['fields'], message: 'an object field lists its fields' });
    }
    if (field.type !== 'object' && field.fields) {
      context.addIssue({
        code: 'custom',
        path: ['fields'],
        message: 'only fields of type "object" have fields',
      });
    }
  });
export type ContractField = z.infer<typeof ContractField>;

/** A check the agent must run before it returns; it reports the outcome as a boolean named after the check. */
export const ContractCheck = z
  .object({
    name: FieldName,
    description: NonEmptyText('the description'),
  })
  .strict();
export type ContractCheck = z.infer<typeof ContractCheck>;

/** What a subagent must return to the orchestrator. */
export const OutputContract = z
  .object({
    fields: z.array(ContractField).min(1),
    checks: z.array(ContractCheck).default([]),
  })
  .strict();
export type OutputContract = z.infer<typeof OutputContract>;

export const WorkflowAgent = z
  .object({
    id: AgentId,
    kind: z.enum(['orchestrator', 'subagent']),
    role: NonEmptyText('the role'),
    instruction: NonEmptyText('the instruction'),
    contract: OutputContract.optional(),
  })
  .strict();
export type WorkflowAgent = z.infer<typeof WorkflowAgent>;

/** One call in the plan: `from` hands work to `to`; a condition makes it a conditional hop (e.g. a return for re-work). */
export const WorkflowHop = z
  .object({
    from: AgentId,
    to: AgentId,
    condition: NonEmptyText('the condition (leave it out for an unconditional hop)').optional(),
  })
  .strict();
export type WorkflowHop = z.infer<typeof WorkflowHop>;

export const Workflow = z
  .object({
    schemaVersion: z.literal(WORKFLOW_SCHEMA_VERSION).default(WORKFLOW_SCHEMA_VERSION),
    agents: z.array(WorkflowAgent).min(1),
    hops: z.array(WorkflowHop).min(1),
  })
  .strict()
  .superRefine((workflow, context) => {
    for (const issue of workflowIssues(workflow)) context.addIssue({ code: 'custom', ...issue });
  });
export type Workflow = z.infer<typeof Workflow>;

/**
 * A structured v0 whose contracts or hops are not specified yet: subagents may lack a contract and `hops` may be
 * empty. Its TypeScript type is `Workflow`'s (the contract is optional there and the hop count is not a type);
 * `designForm` tells the two apart. Only a task's own v0 may be given so.
 */
export const DraftWorkflow = z
  .object({
    schemaVersion: z.literal(WORKFLOW_SCHEMA_VERSION).default(WORKFLOW_SCHEMA_VERSION),
    agents: z.array(WorkflowAgent).min(1),
    hops: z.array(WorkflowHop),
  })
  .strict()
  .superRefine((workflow, context) => {
    for (const issue of workflowIssues(workflow, { draft: true }))
      context.addIssue({ code: 'custom', ...issue });
  });

/** A v0 team given as free text, kept exactly as written: it is what the orchestrator reads. */
export const FreeTextWorkflow = z
  .object({
    schemaVersion: z.literal(WORKFLOW_SCHEMA_VERSION).default(WORKFLOW_SCHEMA_VERSION),
    text: z.string().refine((text) => text.trim() !== '', 'the team text is empty'),
  })
  .strict();
export type FreeTextWorkflow = z.infer<typeof FreeTextWorkflow>;

/** Any design a run holds: a task's v0 in any of its forms, or an optimizer's (always strict) `Workflow`. */
export const TeamDesign = z.union([FreeTextWorkflow, DraftWorkflow]);
export type TeamDesign = Workflow | FreeTextWorkflow;

/** `free-text`; `draft`: structured, with contracts or hops missing; `structured`: a complete `Workflow`. */
export type DesignForm = 'free-text' | 'draft' | 'structured';

export function isFreeTextDesign(design: TeamDesign): design is FreeTextWorkflow {
  return 'text' in design;
}

export function designForm(design: TeamDesign): DesignForm {
  if (isFreeTextDesign(design)) return 'free-text';
  return design.hops.length > 0 && workflowIssues(design).length === 0 ? 'structured' : 'draft';
}

/** What a draft lacks to be a complete workflow, one line each (empty for a complete one, and for free text). */
export function draftGaps(design: TeamDesign): string[] {
  if (isFreeTextDesign(design)) return [];
  const gaps = workflowIssues(design).map((issue) => issue.message);
  if (design.hops.length > 0) return gaps;
  // With no hop at all, one line says it rather than one per subagent.
  return [
    'no hops: the call order is not given',
    ...gaps.filter((gap) => !gap.endsWith('appears in no hop')),
  ];
}

export interface WorkflowIssue {
  path: Array<string | number>;
  message: string;
}

/** The part of a workflow the structural rules look at; loose so that they can also explain a draft that fails the schema. */
export interface WorkflowStructure {
  agents: ReadonlyArray<{ id: string; kind: string; contract?: unknown }>;
  hops: ReadonlyArray<{ from: string; to: string }>;
}

/**
 * The structural rules every workflow obeys, whoever wrote it (a task author or the optimizer). A draft (`draft:
 * true`) is spared the two that say what is not specified yet: a subagent's contract and its place in a hop.
 */
export function workflowIssues(
  workflow: WorkflowStructure,
  options: { draft?: boolean } = {},
): WorkflowIssue[] {
  const issues: WorkflowIssue[] = [];
  const orchestrators = workflow.agents.filter((agent) => agent.kind === 'orchestrator');
  if (orchestrators.length !== 1) {
    issues.push({
      path: ['agents'],
      message: `a workflow has exactly one agent of kind "orchestrator" (found ${orchestrators.length})`,
    });
  }
  const seen = new Set<string>();
  workflow.agents.forEach((agent, index) => {
    if (seen.has(agent.id)) {
      issues.push({ path: ['agents', index, 'id'], message: `agent id "${agent.id}" is used twice` });
    }
    seen.add(agent.id);
    if (agent.kind === 'subagent' && !agent.contract && !options.draft) {
      issues.push({
        path: ['agents', index, 'contract'],
        message: `subagent "${agent.id}" needs an output contract (what it returns to the orchestrator)`,
      });
    }
  });
  const linked = new Set<string>();
  workflow.hops.forEach((hop, index) => {
    for (const end of ['from', 'to'] as const) {
      if (!seen.has(hop[end])) {
        issues.push({ path: ['hops', index, end], message: `hop names unknown agent "${hop[end]}"` });
      }
      linked.add(hop[end]);
    }
    if (hop.from === hop.to) {
      issues.push({ path: ['hops', index], message: `hop from "${hop.from}" to itself` });
    }
  });
  workflow.agents.forEach((agent, index) => {
    if (agent.kind === 'subagent' && !linked.has(agent.id) && !options.draft) {
      issues.push({ path: ['agents', index, 'id'], message: `subagent "${agent.id}" appears in no hop` });
    }
  });
  return issues;
}
