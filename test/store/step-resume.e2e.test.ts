import { existsSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';

import { startProcessInsideStep } from './__fixtures__/child-process.js';
import { openTestRun, temporaryDirectory } from './__fixtures__/test-run.js';
import type { StepRecord } from '../../src/store/step.js';

const SlowOutput = z.object({ files: z.number() });

describe('a step killed half-way', () => {
  it('is cleaned up and redone when the run is resumed, and not run again once done', async () => {
    const runsDirectory = temporaryDirectory();
    openTestRun(runsDirectory).close();
    const killed = await startProcessInsideStep(runsDirectory, 'test-run');
    await killed.kill();

    const run = openTestRun(runsDirectory);
    expect(run.getStep('slow')).toMatchObject({ status: 'interrupted', attempts: 1 });
    expect(existsSync(run.path('slow', 'partial.txt'))).toBe(true);

    const redoneAfter: StepRecord[] = [];
    const slow = vi.fn(({ attempt }: { attempt: number }) => {
      expect(attempt).toBe(2);
      expect(existsSync(run.path('slow'))).toBe(false);
      return { files: 0 };
    });
    const output = await run.step('slow', slow, {
      dir: 'slow',
      output: SlowOutput,
      onRedo: (previous) => void redoneAfter.push(previous),
    });

    expect(output).toEqual({ files: 0 });
    expect(slow).toHaveBeenCalledTimes(1);
    expect(redoneAfter).toEqual([
      expect.objectContaining({ key: 'slow', status: 'interrupted', attempts: 1 }),
    ]);
    expect(run.getStep('slow')).toMatchObject({ status: 'done', attempts: 2 });

    run.close();
    const resumedAgain = openTestRun(runsDirectory);
    const notCalled = vi.fn(() => ({ files: 99 }));
    const stored = await resumedAgain.step('slow', notCalled, { output: SlowOutput });

    expect(notCalled).not.toHaveBeenCalled();
    expect(stored).toEqual({ files: 0 });
    expect(resumedAgain.getStep('slow')).toMatchObject({ status: 'done', attempts: 2 });
  });
});
