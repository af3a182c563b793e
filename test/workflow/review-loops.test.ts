import { describe, expect, it } from 'vitest';

import { reviewLoopProblems } from '../../src/workflow/review-loops.js';
import type { ContractFieldType, Workflow, WorkflowAgent, WorkflowHop } from '../../src/workflow/workflow.js';

/** A subagent returning `fields` (`name: type`), each described by its name. */
function subagent(id: string, role: string, instruction: string, fields: string[]): WorkflowAgent {
  const contractFields = fields.map((field) => {
    const [name, type] = field.split(': ') as [string, ContractFieldType];
    return {
      name,
      type,
      description: name === 'potency_table' ? 'Path of results/potency.csv.' : `The ${name}.`,
    };
  });
  return { id, kind: 'subagent', role, instruction, contract: { fields: contractFields, checks: [] } };
}

/** pharmacy-dose-response's v0 team as it was: issue 43 found both faults in it. */
function doseResponseTeam(hops: WorkflowHop[]): Workflow {
  const orchestrator: WorkflowAgent = {
    id: 'orchestrator',
    kind: 'orchestrator',
    role: 'Lead pharmacologist who plans the analysis, delegates and writes the report.',
    instruction:
      'Run data preparation, curve fitting and review in order; write research_report.md from returned numbers.',
  };
  const reviewer = subagent(
    'reviewer',
    'Reviewer who reruns the entry point and checks every number.',
    'Rerun python3 run.py; compare the report with results/.',
    ['issues: list', 'approved: boolean'],
  );
  reviewer.contract!.checks = [{ name: 'numbers_match', description: 'Report numbers equal the files.' }];
  const agents = [
    orchestrator,
    subagent(
      'assay-analyst',
      'Assay scientist.',
      'Normalise every well to its own plate. Write results/normalised.csv.',
      ['normalised_file: path'],
    ),
    subagent(
      'curve-fitter',
      'Pharmacometrician who fits dose-response models.',
      'Fit a Hill model per compound, and write results/potency.csv, metrics, plots and run.py.',
      ['potency_table: path'],
    ),
    reviewer,
  ];
  return { schemaVersion: 1, agents, hops };
}

const FIRST_ROUND: WorkflowHop[] = [
  { from: 'orchestrator', to: 'assay-analyst' },
  { from: 'assay-analyst', to: 'orchestrator' },
  { from: 'orchestrator', to: 'curve-fitter' },
  { from: 'curve-fitter', to: 'orchestrator' },
  { from: 'orchestrator', to: 'reviewer' },
];
const CONTEXT = { reportPaths: ['research_report.md'] };

describe('review loops a team cannot finish', () => {
  it("flags a rejection sent to a role that does not own what was rejected, and no re-review after the fix (pharmacy-dose-response's v0)", () => {
    const team = doseResponseTeam([
      ...FIRST_ROUND,
      { from: 'reviewer', to: 'curve-fitter', condition: 'approved is false' },
    ]);
    expect(reviewLoopProblems(team, CONTEXT)).toEqual([
      {
        hop: 5,
        message:
          'reviewer → curve-fitter (only if approved is false): reviewer reviews what curve-fitter does not own: research_report.md (orchestrator); send the rejection to the owner, or to the orchestrator',
      },
      {
        hop: 5,
        message:
          'reviewer → curve-fitter (only if approved is false): no hop after it leads from curve-fitter back to reviewer, so the fixed work is never reviewed again; add the re-review to the call order',
      },
    ]);
  });

  it('accepts a rejection to the orchestrator that routes the fix to the owner and has it reviewed again', () => {
    const team = doseResponseTeam([
      ...FIRST_ROUND,
      { from: 'reviewer', to: 'orchestrator', condition: 'approved is false' },
      {
        from: 'orchestrator',
        to: 'curve-fitter',
        condition: 'the reviewer rejected a file the fitter wrote',
      },
      { from: 'curve-fitter', to: 'orchestrator' },
      { from: 'orchestrator', to: 'reviewer' },
    ]);
    expect(reviewLoopProblems(team, CONTEXT)).toEqual([]);
  });

  it('flags a fix routed by the orchestrator that nothing sends back to the reviewer', () => {
    const team = doseResponseTeam([
      ...FIRST_ROUND,
      { from: 'reviewer', to: 'orchestrator' },
      {
        from: 'orchestrator',
        to: 'assay-analyst',
        condition: 'the reviewer rejected a file the analyst wrote',
      },
    ]);
    expect(reviewLoopProblems(team, CONTEXT).map((problem) => problem.message)).toEqual([
      'orchestrator → assay-analyst (only if the reviewer rejected a file the analyst wrote): no hop after it leads from assay-analyst back to reviewer, so the fixed work is never reviewed again; add the re-review to the call order',
    ]);
  });

  it('accepts rejections sent straight to every owner of what the reviewer reviews, each reviewed again', () => {
    const team = doseResponseTeam([
      ...FIRST_ROUND,
      { from: 'reviewer', to: 'curve-fitter', condition: 'approved is false' },
      { from: 'curve-fitter', to: 'reviewer' },
    ]);
    team.agents[3]!.instruction = 'Rerun python3 run.py and check results/potency.csv.';
    team.agents[3]!.contract!.checks = [];
    expect(reviewLoopProblems(team, CONTEXT)).toEqual([]);
  });

  it('knows a reviewer by the boolean its rejection tests, and leaves other conditional hops alone', () => {
    const team = doseResponseTeam([
      { from: 'orchestrator', to: 'assay-analyst' },
      { from: 'assay-analyst', to: 'orchestrator' },
      { from: 'orchestrator', to: 'assay-analyst', condition: 'a plate has no controls' },
      { from: 'orchestrator', to: 'curve-fitter' },
      { from: 'curve-fitter', to: 'orchestrator' },
      { from: 'orchestrator', to: 'reviewer' },
      { from: 'reviewer', to: 'assay-analyst', condition: 'approved is false' },
    ]);
    team.agents[3] = { ...team.agents[3]!, id: 'gatekeeper', role: 'Second pharmacologist.' };
    team.hops = team.hops.map((hop) => (hop.from === 'reviewer' ? { ...hop, from: 'gatekeeper' } : hop));
    team.hops[5] = { from: 'orchestrator', to: 'gatekeeper' };
    expect(reviewLoopProblems(team, CONTEXT).map((problem) => problem.hop)).toEqual([6, 6]);
  });
});
