import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadTask } from '../../src/tasks/load-task.js';
import type { Workflow } from '../../src/workflow/workflow.js';
import { Workflow as WorkflowSchema } from '../../src/workflow/workflow.js';

const suiteDir = fileURLToPath(new URL('../../suites/research-12', import.meta.url));

/** The v0 workflow a task of the research-12 suite ships. */
export async function researchWorkflow(taskId: string): Promise<Workflow> {
  return WorkflowSchema.parse((await loadTask(path.join(suiteDir, taskId))).manifest.workflow);
}

/** A small valid team: orchestrator, analyst and reviewer with a re-work hop. */
export function smallTeam(): Workflow {
  return WorkflowSchema.parse({
    agents: [
      { id: 'orchestrator', kind: 'orchestrator', role: 'Lead.', instruction: 'Plan and delegate.' },
      {
        id: 'analyst',
        kind: 'subagent',
        role: 'Analyst who fits the model.',
        instruction: 'Fit the model on data/values.csv and write results/metrics.json.',
        contract: {
          fields: [
            { name: 'answer', type: 'number', description: 'The fitted value.' },
            { name: 'metrics_file', type: 'path', description: 'Where the metrics are.' },
          ],
          checks: [{ name: 'finite', description: 'Every number is finite.' }],
        },
      },
      {
        id: 'reviewer',
        kind: 'subagent',
        role: 'Reviewer.',
        instruction: 'Rerun the entry point and compare the report with results/.',
        contract: {
          fields: [{ name: 'approved', type: 'boolean', description: 'True when everything matches.' }],
          checks: [{ name: 'numbers_match', description: 'Report equals files.' }],
        },
      },
    ],
    hops: [
      { from: 'orchestrator', to: 'analyst' },
      { from: 'analyst', to: 'orchestrator' },
      { from: 'orchestrator', to: 'reviewer' },
      { from: 'reviewer', to: 'analyst', condition: 'approved is false' },
    ],
  });
}
