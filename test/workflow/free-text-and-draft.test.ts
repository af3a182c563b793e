import { describe, expect, it } from 'vitest';

import { episodePrompt } from '../../src/episode/prompt.js';
import { parseWorkflow } from '../../src/workflow/parse-workflow.js';
import { renderWorkflow, workflowHash } from '../../src/workflow/render.js';
import { diffWorkflows, renderWorkflowDiff } from '../../src/workflow/workflow-diff.js';
import { wordEditRatio } from '../../src/workflow/word-diff.js';
import {
  DraftWorkflow,
  TeamDesign,
  type FreeTextWorkflow,
  type Workflow,
} from '../../src/workflow/workflow.js';
import { smallTeam } from './support.js';

/** Free text as the official repository writes a v0 team: prose, a JSON list, more prose; indentation kept. */
const TEAM_TEXT = [
  'Create an agent team with following agent candidates to solve this problem: ',
  '[',
  '  { "agent_id": "agent_analyst", "role": "Analyst", "instruction": "Fit the model." },',
  '  { "agent_id": "agent_reviewer", "role": "Reviewer", "instruction": "Rerun and compare." }',
  ']',
  '',
  'Write your plan in logs.txt.   ',
  '',
].join('\n');

const freeText: FreeTextWorkflow = { schemaVersion: 1, text: TEAM_TEXT };

/** The small team without contracts or hops: a draft v0. */
function draftTeam(): Workflow {
  const team = smallTeam();
  for (const agent of team.agents) delete agent.contract;
  return DraftWorkflow.parse({ ...team, hops: [] });
}

describe('a free-text design', () => {
  it('renders as the text exactly as given, and the episode prompt is the task then that text', () => {
    expect(renderWorkflow(freeText)).toBe(TEAM_TEXT);
    const prompt = episodePrompt({ task: '# Task\n\nDo it.\n', workflow: renderWorkflow(freeText) });
    expect(prompt).toBe(`# Task\n\nDo it.\n\n${TEAM_TEXT.trimEnd()}\n`);
    expect(prompt).not.toContain('## Team workflow');
  });

  it('is read back from a record as free text, and hashes apart from any other text', () => {
    expect(TeamDesign.parse({ text: TEAM_TEXT })).toEqual(freeText);
    expect(TeamDesign.parse(smallTeam())).toEqual(smallTeam());
    expect(workflowHash(freeText)).not.toBe(workflowHash({ schemaVersion: 1, text: `${TEAM_TEXT} ` }));
  });

  it('is never a valid optimizer design: the strict parser refuses free text and drafts', () => {
    expect(parseWorkflow({ text: TEAM_TEXT }, 'design').ok).toBe(false);
    const draft = parseWorkflow(draftTeam(), 'design');
    expect(draft.ok).toBe(false);
    expect(!draft.ok && draft.errors).toEqual([
      'design: hops: Too small: expected array to have >=1 items',
      'design: agents[1].contract: subagent "analyst" needs an output contract (what it returns to the orchestrator)',
      'design: agents[2].contract: subagent "reviewer" needs an output contract (what it returns to the orchestrator)',
      'design: agents[1].id: subagent "analyst" appears in no hop',
      'design: agents[2].id: subagent "reviewer" appears in no hop',
    ]);
  });
});

describe('diffs and change sizes when a design gets its structure', () => {
  it('free text → structured: one whole-text change measured over the words of both renderings', () => {
    const structured = smallTeam();
    const diff = diffWorkflows(freeText, structured);
    const rendered = renderWorkflow(structured);
    const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
    expect(diff.identical).toBe(false);
    expect(diff.changes).toEqual([
      {
        type: 'design-rewritten',
        fromForm: 'free-text',
        toForm: 'structured',
        before: TEAM_TEXT,
        after: rendered,
      },
    ]);
    expect(diff.size.totalUnits).toBe(words(TEAM_TEXT) + words(rendered));
    expect(diff.size.fraction).toBeCloseTo(wordEditRatio(TEAM_TEXT, rendered), 12);
    expect(diff.size.fraction).toBeGreaterThan(0);
    expect(diff.size.fraction).toBeLessThan(1);
    expect(diff.size.changedUnits).toBe(Math.round(diff.size.fraction * diff.size.totalUnits));

    const text = renderWorkflowDiff(diff);
    expect(text).toContain('~ rewritten from free text into the structured form, line by line');
    expect(text).toContain('  - [');
    expect(text).toContain('  + ## Team workflow');
    expect(text).toContain('  + 1. orchestrator → analyst');
    expect(text).toMatch(/\(\d+% of the design changed: \d+ of \d+ words\)$/);
  });

  it('a structured design that keeps the text’s words changes less than one that drops them', () => {
    const keeping = smallTeam();
    keeping.agents[0]!.instruction = TEAM_TEXT.replace(/\s+/g, ' ').trim();
    expect(diffWorkflows(freeText, keeping).size.fraction).toBeLessThan(
      diffWorkflows(freeText, smallTeam()).size.fraction,
    );
  });

  it('free text against itself is identical; an edited text is a rewrite of free text', () => {
    expect(diffWorkflows(freeText, { ...freeText }).identical).toBe(true);
    const edited = diffWorkflows(freeText, { schemaVersion: 1, text: TEAM_TEXT.replace('Fit', 'Refit') });
    expect(edited.size.fraction).toBeGreaterThan(0);
    expect(renderWorkflowDiff(edited)).toContain('~ free text rewritten, line by line');
  });

  it('draft → structured: the contracts and hops the new version specifies count as added', () => {
    const diff = diffWorkflows(draftTeam(), smallTeam());
    const types = diff.changes.map((change) => change.type);
    expect(types.filter((type) => type === 'contract-added')).toHaveLength(2);
    expect(types.filter((type) => type === 'hop-added')).toHaveLength(4);
    // Units: 3 roles + 3 instructions (unchanged), 3 fields + 2 checks and 4 hops (added).
    expect(diff.size).toEqual({ totalUnits: 15, changedUnits: 9, fraction: 9 / 15 });
  });

  it('renders a draft without contracts or hops, the call order left open', () => {
    const text = renderWorkflow(draftTeam());
    expect(text).toContain('### analyst');
    expect(text).not.toContain('Returns to the orchestrator');
    expect(text).toContain('### Call order\n\nNot fixed: call the subagents in the order the work needs.');
  });
});
