import { describe, expect, it } from 'vitest';

import { judgeSystemPrompt } from '../../src/judge/index.js';
import { DOMAIN_JUDGES, renderTaskPrompt, type LoadedTask } from '../../src/tasks/index.js';
import { loadResearchTask, RESEARCH_12_TASK_IDS } from '../tasks/support.js';

const tasks = Promise.all(RESEARCH_12_TASK_IDS.map(loadResearchTask));

/** The lens and the task's refinement of it, as the judge's system prompt states them. */
function lensPart(task: LoadedTask): string {
  const system = judgeSystemPrompt(task.judge);
  return system.slice(
    system.indexOf('Your lens as a reviewer:'),
    system.indexOf('How the task and your lens combine:'),
  );
}

describe('the judge’s lens on the research-12 tasks', () => {
  it('is the domain’s, refined by each task’s own focus, which the team never sees', async () => {
    for (const task of await tasks) {
      const domain = DOMAIN_JUDGES[task.manifest.domain]!;
      expect(task.judge.lens, task.manifest.id).toBe(domain.lens);
      expect(task.judge.focus, task.manifest.id).toBeTruthy();
      expect(lensPart(task)).toBe(
        `Your lens as a reviewer: ${domain.lens}.\n\nIn this task, that means above all: ${task.judge.focus}.\n\n`,
      );
      expect(renderTaskPrompt(task)).not.toContain(task.judge.focus!);
    }
  });

  it('asks first, for the minimum-variance task, about the covariance and the stale prices, not trading costs', async () => {
    const task = (await tasks).find((candidate) => candidate.manifest.id === 'finance-min-variance')!;
    const lens = lensPart(task);
    const first = (pattern: RegExp) => lens.search(pattern);
    expect(first(/covariance/)).toBeGreaterThan(0);
    expect(first(/stale/)).toBeGreaterThan(0);
    expect(first(/stale/)).toBeLessThan(first(/costs/));
    expect(task.judge.focus).toMatch(/covariance .* from 161 closes/);
  });

  it('names in each domain’s default only what all of its tasks share', () => {
    // Each default opens with the fitness of the data, the concern every task of the domain has; costs apply only
    // to the tasks that trade (a minimum-variance portfolio and a volatility model trade nothing).
    expect(DOMAIN_JUDGES.finance!.lens).toMatch(/^look first for data that is not fit for use as given/);
    expect(DOMAIN_JUDGES.finance!.lens).not.toMatch(/transaction costs/);
    expect(DOMAIN_JUDGES.finance!.lens).toContain('costs wherever the strategy trades');
    // Confounding concerns one pharmacy task of four: it is one kind of unusable data among others, not the first point.
    expect(DOMAIN_JUDGES.pharmacy!.lens).toMatch(/^look first for data that must not be used as recorded/);
    expect(DOMAIN_JUDGES.robotics!.lens).toMatch(/plan, path or estimate/);
  });
});
