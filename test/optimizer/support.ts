import type { ExecutionMetadata } from '../../src/records/execution-metadata.js';
import type { PairwiseComparison } from '../../src/records/optimizer-history.js';
import type { NextMatch } from '../../src/records/optimizer-call.js';
import type { OptimizerInput } from '../../src/optimizer/optimizer-prompt.js';
import { Workflow } from '../../src/workflow/workflow.js';
import { smallTeam } from '../workflow/support.js';

export const V1_RATIONALE =
  'Workspace B wins on deliverable coverage. Workspace A is missing results/ablation.json and its report lacks a Limitations section. ' +
  'The plots in B are labelled. A should have rerun run.py before reporting; its numbers did not match results/metrics.json.';

export const V2_RATIONALE =
  '- Both workspaces produce a report.\n- Workspace A still has no results/ablation.json, so the ablation is missing again.\n' +
  '- B reports a confidence interval for the estimate. A must report uncertainty for every headline number.';

/** A version with a critic who refits independently, and the reviewer sending work back on a failed check. */
export function designWithCritic(): Workflow {
  const next = smallTeam();
  next.agents.push({
    id: 'critic',
    kind: 'subagent',
    role: 'Critic who refits independently.',
    instruction: 'Refit with a second method and compare.',
    contract: { fields: [{ name: 'agrees', type: 'boolean', description: 'Both fits agree.' }], checks: [] },
  });
  next.hops.splice(
    2,
    0,
    { from: 'orchestrator', to: 'critic' },
    { from: 'critic', to: 'analyst', condition: 'agrees is false' },
  );
  return Workflow.parse(next);
}

export function execution(overrides: Partial<ExecutionMetadata> = {}): ExecutionMetadata {
  return {
    status: 'success',
    failure: null,
    delegations: 4,
    subagentThreads: 4,
    modelCalls: 37,
    failedModelCalls: 0,
    tokens: {
      prompt: 120_000,
      completion: 9_000,
      reasoning: 4_000,
      orchestratorCompletion: 3_000,
      subagentCompletion: 6_000,
    },
    durationMs: 421_000,
    limitExceeded: null,
    tamperedPaths: [],
    ...overrides,
  };
}

export function history(): PairwiseComparison[] {
  return [
    {
      candidate: { label: 'v1', design: designWithCritic() },
      opponent: { label: 'v0', design: smallTeam() },
      winner: 'opponent',
      rationale: V1_RATIONALE,
      candidateExecution: execution({
        status: 'failure',
        failure: { kind: 'timeout', detail: 'the episode ran past its wall-clock limit and was stopped' },
        delegations: 0,
      }),
    },
    {
      candidate: { label: 'v2', design: smallTeam() },
      opponent: { label: 'reference', design: null },
      winner: 'opponent',
      rationale: V2_RATIONALE,
      candidateExecution: execution({
        status: 'failure',
        failure: { kind: 'timeout', detail: 'stopped after 3600 s' },
        delegations: 0,
      }),
    },
  ];
}

export function optimizerInput(overrides: Partial<OptimizerInput> = {}): OptimizerInput {
  return {
    task: { id: 'toy-task', prompt: '# Toy task\n\nEstimate the answer from data/values.csv and report it.' },
    current: { label: 'v2', design: smallTeam() },
    previousBest: { label: 'v0', design: smallTeam(), rationale: 'v0 finished every deliverable.' },
    original: smallTeam(),
    workspaceEvidence:
      'Files: research_report.md (412 words), results/metrics.json. Missing: results/ablation.json.',
    execution: execution({ delegations: 0 }),
    history: history(),
    ...overrides,
  };
}

/** A well-formed optimizer reply proposing `design`. */
export function replyFor(design: Workflow, extra: Record<string, unknown> = {}): string {
  const { schemaVersion: _schemaVersion, ...body } = design;
  return JSON.stringify({
    design: body,
    changes: ['reviewer: new check ablation_written'],
    why: 'The ablation file was reported missing twice.',
    evidence_used: ['"results/ablation.json" was reported missing in 2 comparisons'],
    expected_impact: 'The next workspace has results/ablation.json.',
    verification_checks: ['results/ablation.json exists and lists at least two variants'],
    ...extra,
  });
}

/** The small team with one new reviewer check: a small, valid change. */
export function smallImprovement(): Workflow {
  const next = smallTeam();
  next.agents[2]!.contract!.checks.push({
    name: 'ablation_written',
    description: 'results/ablation.json exists with at least two variants.',
  });
  return Workflow.parse(next);
}

/** The comparison v3 faces: v1, the best design so far, under the paper's rule. */
export function nextMatch(overrides: Partial<NextMatch> = {}): NextMatch {
  return {
    version: 'v3',
    opponent: { label: 'v1', bare: false },
    champion: { label: 'v1', bare: false },
    rule: 'paper',
    judgeMode: 'random',
    ...overrides,
  };
}
