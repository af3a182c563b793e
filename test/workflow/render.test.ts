import { describe, expect, it } from 'vitest';

import { episodePrompt, TEACHER_DIRECTIVE } from '../../src/episode/prompt.js';
import { readPrompt } from '../../src/toy/workflow-reading.js';
import { renderWorkflow } from '../../src/workflow/render.js';
import { smallTeam } from './support.js';

const FOREGROUND = '`run_in_background: false`';

describe('the workflow as the orchestrator reads it', () => {
  it('asks for foreground delegation without the teacher directive, as with it', () => {
    const search = episodePrompt({ task: '# Task\n\nDo it.', workflow: renderWorkflow(smallTeam()) });
    const training = episodePrompt({
      task: '# Task\n\nDo it.',
      workflow: renderWorkflow(smallTeam()),
      teacher: true,
    });
    expect(search).not.toContain(TEACHER_DIRECTIVE);
    const workflowPart = search.slice(search.indexOf('## Team workflow'), search.indexOf('### orchestrator'));
    expect(workflowPart).toContain(`Call each subagent in the foreground (${FOREGROUND})`);
    expect(training).toContain(workflowPart);
  });

  it('is still read whole by the toy model: task, agents with their contracts, and the call order', () => {
    const prompt = episodePrompt({ task: '# Task\n\nDo it.', workflow: renderWorkflow(smallTeam()) });
    const read = readPrompt(prompt);
    expect(read.task).toBe('# Task\n\nDo it.');
    expect(read.workflow?.orchestratorId).toBe('orchestrator');
    expect(
      read.workflow?.agents.map((agent) => [agent.id, agent.fields.length, agent.checks.length]),
    ).toEqual([
      ['orchestrator', 0, 0],
      ['analyst', 2, 1],
      ['reviewer', 1, 1],
    ]);
    expect(read.workflow?.agents[0]?.instruction).toBe('Plan and delegate.');
    expect(read.workflow?.hops).toHaveLength(4);
  });
});
