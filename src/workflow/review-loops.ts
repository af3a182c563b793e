import type { Workflow, WorkflowAgent, WorkflowHop } from './workflow.js';

/**
 * Review loops a team cannot finish. A reviewer is a subagent whose id or role says it reviews (review, critic, audit,
 * verify, validate, check), or whose boolean contract field a hop's condition names (`approved is false`). A rejection
 * hop is a conditional hop from a reviewer, or one whose condition names a reviewer or speaks of a rejection
 * ("rejected", "not approved", "fails") when there is one reviewer (the orchestrator routing the rejected work). Two
 * faults are flagged:
 *
 * - The rejection goes to a subagent that does not own what was rejected. What a reviewer reviews: the workspace paths
 *   its role, instruction and contract name (`results/potency.csv`, `run.py`, a folder `results/`), and the report
 *   deliverables when it says "report". Who owns a path: the agents whose instruction names it in a sentence that
 *   writes (write, save, produce, create, generate, draft, make, build, update, fix), or whose contract returns it as a
 *   `path` field. Every reviewed path with an owner must have one among the reviewer's rejection targets; a rejection
 *   to the orchestrator is always fine (it can redo its own part and delegate the rest).
 * - No re-review after the fix: the hops listed after the rejection (the call order) must lead from its target back to
 *   the reviewer, or the fixed work is never reviewed again.
 */
export interface ReviewLoopProblem {
  /** Index of the rejection hop in `hops`. */
  hop: number;
  message: string;
}

const REVIEWER_WORDS =
  /\b(review|reviewer|reviews|critic|critique|audit|auditor|verif\w*|validat\w*|check|checker|qa)\b/i;
const WRITING_WORDS =
  /\b(write|writes|writing|save|saves|produce|produces|create|creates|generate|generates|draft|drafts|make|makes|build|builds|update|updates|fix|fixes|render|renders)\b/i;
/** Workspace paths as people name them in instructions: `results/potency.csv`, `run.py`, `results/`. */
const PATH_TOKEN =
  /(?<![\w./-])((?:[\w-][\w.-]*\/)*[\w-][\w.-]*\.(?:py|csv|json|jsonl|md|txt|png|svg|pdf|html|yaml|yml|npz|npy|parquet|pkl|ipynb)|(?:[\w-][\w.-]*\/)+)(?![\w/])/g;

interface ReviewLoopContext {
  /** The report deliverables' paths (what "the report" means), e.g. `research_report.md`. */
  reportPaths: string[];
}

export function reviewLoopProblems(workflow: Workflow, context: ReviewLoopContext): ReviewLoopProblem[] {
  const agents = new Map(workflow.agents.map((agent) => [agent.id, agent]));
  const rejections = workflow.hops.flatMap((hop, index) => {
    const reviewer = reviewerOf(hop, workflow.agents);
    return reviewer ? [{ hop, index, reviewer }] : [];
  });
  const problems: ReviewLoopProblem[] = [];
  for (const { hop, index, reviewer } of rejections) {
    // Who gets the rejected work back: each rejection's target, and whoever routes it when that is not the reviewer.
    const handlers = rejections
      .filter((other) => other.reviewer === reviewer)
      .flatMap((other) => (other.hop.from === reviewer.id ? [other.hop.to] : [other.hop.from, other.hop.to]));
    if (!handlers.some((id) => agents.get(id)?.kind === 'orchestrator')) {
      const unowned = reviewedPaths(reviewer, context).flatMap((reviewed) => {
        const owners = workflow.agents.filter(
          (agent) =>
            agent !== reviewer && ownedPaths(agent, context).some((owned) => samePlace(owned, reviewed)),
        );
        return owners.length === 0 || owners.some((owner) => handlers.includes(owner.id))
          ? []
          : [`${reviewed} (${owners.map((owner) => owner.id).join(', ')})`];
      });
      if (unowned.length > 0) {
        problems.push({
          hop: index,
          message: `${describe(hop)}: ${reviewer.id} reviews what ${hop.to} does not own: ${unowned.join('; ')}; send the rejection to the owner, or to the orchestrator`,
        });
      }
    }
    if (!leadsBack(workflow.hops, index, reviewer.id)) {
      problems.push({
        hop: index,
        message: `${describe(hop)}: no hop after it leads from ${hop.to} back to ${reviewer.id}, so the fixed work is never reviewed again; add the re-review to the call order`,
      });
    }
  }
  return problems;
}

function describe(hop: WorkflowHop): string {
  return `${hop.from} → ${hop.to} (only if ${hop.condition})`;
}

/**
 * The reviewer whose rejection a conditional hop carries: its source, when that is a reviewer; else a reviewer its
 * condition names, or the only reviewer when the condition speaks of a rejection ("rejected", "not approved", "fails").
 */
function reviewerOf(hop: WorkflowHop, agents: WorkflowAgent[]): WorkflowAgent | undefined {
  const condition = hop.condition;
  if (condition === undefined) return undefined;
  const from = agents.find((agent) => agent.id === hop.from);
  if (from && isReviewer(from, condition)) return from;
  const reviewers = agents.filter((agent) => agent.id !== hop.to && isReviewer(agent, condition));
  const named = reviewers.find((agent) => new RegExp(`\\b${agent.id}\\b`, 'i').test(condition));
  if (named) return named;
  return reviewers.length === 1 && /\b(reject\w*|not approved|fail\w*)\b/i.test(condition)
    ? reviewers[0]
    : undefined;
}

function isReviewer(agent: WorkflowAgent, condition: string): boolean {
  if (agent.kind !== 'subagent') return false;
  if (REVIEWER_WORDS.test(`${agent.id.replaceAll('-', ' ')} ${agent.role}`)) return true;
  return (agent.contract?.fields ?? []).some(
    (field) => field.type === 'boolean' && new RegExp(`\\b${field.name}\\b`).test(condition),
  );
}

/** Whether the hops after `index`, in order, lead from the rejection's target back to the reviewer. */
function leadsBack(hops: WorkflowHop[], index: number, reviewer: string): boolean {
  const reached = new Set([hops[index]!.to]);
  for (const hop of hops.slice(index + 1)) if (reached.has(hop.from)) reached.add(hop.to);
  return reached.has(reviewer);
}

function pathsIn(text: string, context: ReviewLoopContext): string[] {
  const paths = [...text.matchAll(PATH_TOKEN)].map((match) => match[1]!);
  if (/\breport\b/i.test(text)) paths.push(...context.reportPaths);
  return [...new Set(paths)];
}

function reviewedPaths(agent: WorkflowAgent, context: ReviewLoopContext): string[] {
  const contract = agent.contract;
  const texts = [
    agent.role,
    agent.instruction,
    ...(contract?.fields ?? []).map((field) => field.description),
    ...(contract?.checks ?? []).map((check) => check.description),
  ];
  return [...new Set(texts.flatMap((text) => pathsIn(text, context)))];
}

function ownedPaths(agent: WorkflowAgent, context: ReviewLoopContext): string[] {
  const writing = agent.instruction
    .split(/(?<=[.;!?])\s+|\n/)
    .filter((sentence) => WRITING_WORDS.test(sentence))
    .flatMap((sentence) => pathsIn(sentence, context));
  const returned = (agent.contract?.fields ?? [])
    .filter((field) => field.type === 'path')
    .flatMap((field) => pathsIn(field.description, context));
  return [...new Set([...writing, ...returned])];
}

/** The same path, or a folder and a path inside it. */
function samePlace(a: string, b: string): boolean {
  return a === b || (a.endsWith('/') && b.startsWith(a)) || (b.endsWith('/') && a.startsWith(b));
}
