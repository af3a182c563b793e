import { afterAll, describe, expect, it } from 'vitest';

import { removeScratch, writeToyTask } from './toy-task.js';
import { loadTask } from '../../src/tasks/load-task.js';
import { renderTaskPrompt } from '../../src/tasks/render-prompt.js';

afterAll(removeScratch);

describe('the task prompt', () => {
  it('adds deliverables, protected files and the environment to the author text', async () => {
    const prompt = renderTaskPrompt(await loadTask(await writeToyTask()));
    expect(prompt.startsWith('# Toy task\n\nFind the answer.\n\n## Deliverables\n')).toBe(true);
    expect(prompt).toContain(
      '- `results/metrics.json` (metrics-json): Numbers. A JSON object with the keys `answer`; numbers must be finite (no NaN or Infinity).',
    );
    expect(prompt).toContain('## Protected files');
    expect(prompt).toContain('- `sim/sim.py`');
    expect(prompt).toContain(
      'Python 3 (call `python3`) with numpy, pandas, matplotlib, scipy, scikit-learn. No network',
    );
  });
});
