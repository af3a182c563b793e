import { isDeepStrictEqual } from 'node:util';

import { renderWorkflow } from './render.js';
import { wordCount, wordEditRatio } from './word-diff.js';
import {
  designForm,
  isFreeTextDesign,
  type ContractCheck,
  type ContractField,
  type DesignForm,
  type OutputContract,
  type TeamDesign,
  type WorkflowAgent,
  type WorkflowHop,
} from './workflow.js';

export { DESIGN_FORM_NAMES, renderWorkflowDiff } from './workflow-diff-text.js';

/** One difference between two versions of a workflow. Hop positions are 1-based, as the rendered call order numbers them. */
export type WorkflowChange =
  | { type: 'agent-added'; agent: WorkflowAgent }
  | { type: 'agent-removed'; agent: WorkflowAgent }
  | { type: 'kind-changed'; agentId: string; before: WorkflowAgent['kind']; after: WorkflowAgent['kind'] }
  | { type: 'role-changed'; agentId: string; before: string; after: string }
  | { type: 'instruction-changed'; agentId: string; before: string; after: string }
  | { type: 'contract-added'; agentId: string; contract: OutputContract }
  | { type: 'contract-removed'; agentId: string; contract: OutputContract }
  | { type: 'field-added'; agentId: string; field: ContractField }
  | { type: 'field-removed'; agentId: string; field: ContractField }
  | { type: 'field-changed'; agentId: string; before: ContractField; after: ContractField }
  | { type: 'check-added'; agentId: string; check: ContractCheck }
  | { type: 'check-removed'; agentId: string; check: ContractCheck }
  | { type: 'check-changed'; agentId: string; before: ContractCheck; after: ContractCheck }
  | { type: 'hop-added'; hop: WorkflowHop; position: number }
  | { type: 'hop-removed'; hop: WorkflowHop; position: number }
  | { type: 'hop-changed'; before: WorkflowHop; after: WorkflowHop; position: number }
  | { type: 'hop-moved'; hop: WorkflowHop; from: number; to: number }
  /** A free-text side: the two designs as the orchestrator reads them (`renderWorkflow`), compared as text. */
  | { type: 'design-rewritten'; fromForm: DesignForm; toForm: DesignForm; before: string; after: string };

export type WorkflowChangeType = WorkflowChange['type'];

/**
 * How much of a design changed, for the search's stabiliser to bound.
 *
 * The design is counted in units: each agent's role (with its kind) and instruction, each contract field, each
 * contract check and each hop, over the union of both versions. An added or removed unit counts 1; an edited text
 * counts its word edit ratio (so rewording half an instruction counts about 0.5); a changed field type, a hop
 * moved in the call order or a condition added or dropped counts 1. `fraction` = changed / total, from 0 to 1.
 *
 * When either side is free text (a task's v0, before the optimizer gave it a structure), there are no units to match:
 * the two designs are compared as the orchestrator reads them, and the units are the words of both texts, a removed
 * or added word counting 1. `fraction` is then the word edit ratio of the two texts.
 */
export interface WorkflowChangeSize {
  totalUnits: number;
  changedUnits: number;
  fraction: number;
}

export interface WorkflowDiff {
  identical: boolean;
  changes: WorkflowChange[];
  size: WorkflowChangeSize;
}

/**
 * The differences that turn `before` into `after`. Agents are matched by id; contract fields and checks by name; hops
 * by their ends, in order. A draft (contracts or hops missing) is diffed as any structured design: what the new
 * version specifies shows as added. When either side is free text, the diff is one whole-text change.
 */
export function diffWorkflows(before: TeamDesign, after: TeamDesign): WorkflowDiff {
  if (isFreeTextDesign(before) || isFreeTextDesign(after)) return diffAsText(before, after);
  const units = new UnitLedger();
  const changes: WorkflowChange[] = [];
  const afterAgents = new Map(after.agents.map((agent) => [agent.id, agent]));
  const beforeIds = new Set(before.agents.map((agent) => agent.id));

  for (const agent of before.agents) {
    const next = afterAgents.get(agent.id);
    if (!next) {
      changes.push({ type: 'agent-removed', agent });
      for (const unit of agentUnits(agent)) units.change(unit, 1);
      continue;
    }
    changes.push(...diffAgent(agent, next, units));
  }
  for (const agent of after.agents) {
    if (beforeIds.has(agent.id)) continue;
    changes.push({ type: 'agent-added', agent });
    for (const unit of agentUnits(agent)) units.change(unit, 1);
  }
  changes.push(...diffHops(before.hops, after.hops, units));
  const size = units.size();
  return { identical: changes.length === 0, changes, size };
}

/** Shorthand for `diffWorkflows(before, after).size`. */
export function workflowChangeSize(before: TeamDesign, after: TeamDesign): WorkflowChangeSize {
  return diffWorkflows(before, after).size;
}

function diffAsText(before: TeamDesign, after: TeamDesign): WorkflowDiff {
  const beforeText = renderWorkflow(before);
  const afterText = renderWorkflow(after);
  const fromForm = designForm(before);
  const toForm = designForm(after);
  if (beforeText === afterText && fromForm === toForm) {
    const words = wordCount(beforeText);
    return { identical: true, changes: [], size: { totalUnits: words, changedUnits: 0, fraction: 0 } };
  }
  const totalUnits = wordCount(beforeText) + wordCount(afterText);
  const fraction = wordEditRatio(beforeText, afterText);
  return {
    identical: false,
    changes: [{ type: 'design-rewritten', fromForm, toForm, before: beforeText, after: afterText }],
    size: { totalUnits, changedUnits: Math.round(fraction * totalUnits), fraction },
  };
}

class UnitLedger {
  private readonly weights = new Map<string, number>();

  /** A unit present in either version; unchanged units weigh 0. */
  count(unit: string): void {
    if (!this.weights.has(unit)) this.weights.set(unit, 0);
  }

  change(unit: string, weight: number): void {
    this.weights.set(unit, Math.min(1, (this.weights.get(unit) ?? 0) + weight));
  }

  size(): WorkflowChangeSize {
    const totalUnits = this.weights.size;
    let changedUnits = 0;
    for (const weight of this.weights.values()) changedUnits += weight;
    return { totalUnits, changedUnits, fraction: totalUnits === 0 ? 0 : changedUnits / totalUnits };
  }
}

function agentUnits(agent: WorkflowAgent): string[] {
  return [
    `${agent.id}/role`,
    `${agent.id}/instruction`,
    ...(agent.contract ? contractUnits(agent.id, agent.contract) : []),
  ];
}

function contractUnits(agentId: string, contract: OutputContract): string[] {
  return [
    ...contract.fields.map((field) => `${agentId}/field/${field.name}`),
    ...contract.checks.map((check) => `${agentId}/check/${check.name}`),
  ];
}

function diffAgent(before: WorkflowAgent, after: WorkflowAgent, units: UnitLedger): WorkflowChange[] {
  const agentId = before.id;
  const changes: WorkflowChange[] = [];
  units.count(`${agentId}/role`);
  units.count(`${agentId}/instruction`);
  if (before.kind !== after.kind) {
    changes.push({ type: 'kind-changed', agentId, before: before.kind, after: after.kind });
    units.change(`${agentId}/role`, 1);
  }
  if (before.role !== after.role) {
    changes.push({ type: 'role-changed', agentId, before: before.role, after: after.role });
    units.change(`${agentId}/role`, wordEditRatio(before.role, after.role));
  }
  if (before.instruction !== after.instruction) {
    changes.push({
      type: 'instruction-changed',
      agentId,
      before: before.instruction,
      after: after.instruction,
    });
    units.change(`${agentId}/instruction`, wordEditRatio(before.instruction, after.instruction));
  }
  if (before.contract && !after.contract) {
    changes.push({ type: 'contract-removed', agentId, contract: before.contract });
    for (const unit of contractUnits(agentId, before.contract)) units.change(unit, 1);
  } else if (!before.contract && after.contract) {
    changes.push({ type: 'contract-added', agentId, contract: after.contract });
    for (const unit of contractUnits(agentId, after.contract)) units.change(unit, 1);
  } else if (before.contract && after.contract) {
    changes.push(...diffContract(agentId, before.contract, after.contract, units));
  }
  return changes;
}

function diffContract(
  agentId: string,
  before: OutputContract,
  after: OutputContract,
  units: UnitLedger,
): WorkflowChange[] {
  const changes: WorkflowChange[] = [];
  const fields = matchByName(before.fields, after.fields);
  for (const field of fields.removed) {
    changes.push({ type: 'field-removed', agentId, field });
    units.change(`${agentId}/field/${field.name}`, 1);
  }
  for (const [previous, next] of fields.matched) {
    const unit = `${agentId}/field/${previous.name}`;
    units.count(unit);
    if (isDeepStrictEqual(previous, next)) continue;
    changes.push({ type: 'field-changed', agentId, before: previous, after: next });
    const sameShape =
      previous.type === next.type && isDeepStrictEqual(fieldShape(previous), fieldShape(next));
    units.change(unit, sameShape ? wordEditRatio(fieldText(previous), fieldText(next)) : 1);
  }
  for (const field of fields.added) {
    changes.push({ type: 'field-added', agentId, field });
    units.change(`${agentId}/field/${field.name}`, 1);
  }
  const checks = matchByName(before.checks, after.checks);
  for (const check of checks.removed) {
    changes.push({ type: 'check-removed', agentId, check });
    units.change(`${agentId}/check/${check.name}`, 1);
  }
  for (const [previous, next] of checks.matched) {
    const unit = `${agentId}/check/${previous.name}`;
    units.count(unit);
    if (previous.description === next.description) continue;
    changes.push({ type: 'check-changed', agentId, before: previous, after: next });
    units.change(unit, wordEditRatio(previous.description, next.description));
  }
  for (const check of checks.added) {
    changes.push({ type: 'check-added', agentId, check });
    units.change(`${agentId}/check/${check.name}`, 1);
  }
  return changes;
}

/** The names and types of a field's nested fields: what a consumer of the contract depends on. */
function fieldShape(field: ContractField): Array<[string, string]> {
  return (field.fields ?? []).map((nested) => [nested.name, nested.type]);
}

function fieldText(field: ContractField): string {
  return [field.description, ...(field.fields ?? []).map((nested) => nested.description)].join(' ');
}

function matchByName<T extends { name: string }>(
  before: T[],
  after: T[],
): { removed: T[]; matched: Array<[T, T]>; added: T[] } {
  const afterByName = new Map(after.map((item) => [item.name, item]));
  const beforeNames = new Set(before.map((item) => item.name));
  const matched: Array<[T, T]> = [];
  const removed: T[] = [];
  for (const item of before) {
    const next = afterByName.get(item.name);
    if (next) matched.push([item, next]);
    else removed.push(item);
  }
  return { removed, matched, added: after.filter((item) => !beforeNames.has(item.name)) };
}

/**
 * Hops are matched by their ends: the n-th `a → b` before with the n-th `a → b` after. A matched hop whose condition
 * differs is changed; matched hops outside the longest run that kept its relative order are moved.
 */
function diffHops(before: WorkflowHop[], after: WorkflowHop[], units: UnitLedger): WorkflowChange[] {
  const changes: WorkflowChange[] = [];
  const beforeKeys = occurrenceKeys(before);
  const afterKeys = occurrenceKeys(after);
  const afterPositions = new Map(afterKeys.map((key, index) => [key, index]));
  const matched: Array<{ beforeIndex: number; afterIndex: number; unit: string }> = [];
  before.forEach((hop, beforeIndex) => {
    const unit = `hop/${beforeKeys[beforeIndex]!}`;
    const afterIndex = afterPositions.get(beforeKeys[beforeIndex]!);
    if (afterIndex === undefined) {
      changes.push({ type: 'hop-removed', hop, position: beforeIndex + 1 });
      units.change(unit, 1);
      return;
    }
    units.count(unit);
    matched.push({ beforeIndex, afterIndex, unit });
    const next = after[afterIndex]!;
    if (hop.condition !== next.condition) {
      changes.push({ type: 'hop-changed', before: hop, after: next, position: afterIndex + 1 });
      const weight = hop.condition && next.condition ? wordEditRatio(hop.condition, next.condition) : 1;
      units.change(unit, weight);
    }
  });
  const inOrder = longestIncreasingRun(matched.map((match) => match.afterIndex));
  matched.forEach((match, index) => {
    if (inOrder.has(index)) return;
    changes.push({
      type: 'hop-moved',
      hop: after[match.afterIndex]!,
      from: match.beforeIndex + 1,
      to: match.afterIndex + 1,
    });
    units.change(match.unit, 1);
  });
  const matchedAfter = new Set(matched.map((match) => match.afterIndex));
  after.forEach((hop, afterIndex) => {
    if (matchedAfter.has(afterIndex)) return;
    changes.push({ type: 'hop-added', hop, position: afterIndex + 1 });
    units.change(`hop/${afterKeys[afterIndex]!}`, 1);
  });
  return changes;
}

function occurrenceKeys(hops: WorkflowHop[]): string[] {
  const seen = new Map<string, number>();
  return hops.map((hop) => {
    const ends = `${hop.from}>${hop.to}`;
    const occurrence = (seen.get(ends) ?? 0) + 1;
    seen.set(ends, occurrence);
    return `${ends}#${occurrence}`;
  });
}

/** Indices (into `values`) of one longest strictly increasing subsequence. */
function longestIncreasingRun(values: number[]): Set<number> {
  const lengths = values.map(() => 1);
  const previous = values.map(() => -1);
  let best = -1;
  for (let i = 0; i < values.length; i++) {
    for (let j = 0; j < i; j++) {
      if (values[j]! < values[i]! && lengths[j]! + 1 > lengths[i]!) {
        lengths[i] = lengths[j]! + 1;
        previous[i] = j;
      }
    }
    if (best < 0 || lengths[i]! > lengths[best]!) best = i;
  }
  const kept = new Set<number>();
  for (let index = best; index >= 0; index = previous[index]!) kept.add(index);
  return kept;
}
