import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';

import { openTestRun, temporaryDirectory } from './__fixtures__/test-run.js';

const Champion = z.object({ candidate: z.number().int(), score: z.number() });

describe('a step output', () => {
  it('is validated, stored as JSON, and returned the same on the first run and when skipped', async () => {
    const runsDirectory = temporaryDirectory();
    const first = openTestRun(runsDirectory);
    const computed = await first.step('search/t1', () => ({ candidate: 3, score: 0.75 }), {
      output: Champion,
    });
    first.close();

    const skipped = await openTestRun(runsDirectory).step('search/t1', () => ({ candidate: 0, score: 0 }), {
      output: Champion,
    });

    expect(computed).toEqual({ candidate: 3, score: 0.75 });
    expect(skipped).toEqual(computed);
    expectTypeOf(skipped).toEqualTypeOf<{ candidate: number; score: number }>();
  });

  it('that would not read back the same from JSON fails the step', async () => {
    const run = openTestRun(temporaryDirectory());

    const dated = run.step('report', () => ({ at: new Date() }), { output: z.object({ at: z.date() }) });

    await expect(dated).rejects.toThrow(
      'step "report" returned an output that does not survive storage as JSON: at: ',
    );
    expect(run.getStep('report')).toMatchObject({ status: 'failed' });
  });

  it('that is invalid fails the step, which stays not done', async () => {
    const run = openTestRun(temporaryDirectory());

    const invalid = run.step('search/t1', () => ({ candidate: 1.5, score: 1 }), { output: Champion });

    await expect(invalid).rejects.toThrow('step "search/t1" returned an invalid output: candidate: ');
    expect(run.getStep('search/t1')).toMatchObject({ status: 'failed' });
  });

  it('stored by an older shape is refused with what to do', async () => {
    const runsDirectory = temporaryDirectory();
    const first = openTestRun(runsDirectory);
    await first.step('search/t1', () => ({ candidate: 3 }), { output: z.object({ candidate: z.number() }) });
    first.close();

    const resumed = openTestRun(runsDirectory).step('search/t1', () => ({ candidate: 3, score: 1 }), {
      output: Champion,
    });

    await expect(resumed).rejects.toThrow(
      /step "search\/t1" is recorded as done in mass.db, but its stored output no longer fits .*score: /,
    );
  });
});

describe('a step commit', () => {
  it('writes its rows in the transaction that marks the step done, and none when it fails', async () => {
    const run = openTestRun(temporaryDirectory());
    run.database.exec('CREATE TABLE episodes (id TEXT PRIMARY KEY, score REAL) STRICT;');
    const insert = run.database.prepare('INSERT INTO episodes (id, score) VALUES (?, ?)');

    const failing = run.step('episode/e1', () => ({ candidate: 1, score: 0.5 }), {
      output: Champion,
      commit: (_database, output) => {
        insert.run('e1', output.score);
        throw new Error('disk full');
      },
    });
    await expect(failing).rejects.toThrow('disk full');
    expect(run.database.prepare('SELECT count(*) FROM episodes').pluck().get()).toBe(0);
    expect(run.getStep('episode/e1')).toMatchObject({ status: 'failed', error: 'disk full' });

    await run.step('episode/e1', () => ({ candidate: 1, score: 0.5 }), {
      output: Champion,
      commit: (_database, output) => void insert.run('e1', output.score),
    });
    expect(run.database.prepare('SELECT id, score FROM episodes').all()).toEqual([{ id: 'e1', score: 0.5 }]);
    expect(run.getStep('episode/e1')).toMatchObject({ status: 'done', attempts: 2 });
  });
});

describe('listing steps', () => {
  it('gives every step with its status, attempts and timings, optionally by key prefix', async () => {
    const run = openTestRun(temporaryDirectory());
    await run.step('episode/e1', () => undefined);
    await run.step('episode/e2', () => Promise.reject(new Error('timeout'))).catch(() => undefined);
    await run.step('search/t1', () => undefined);

    const episodes = run.listSteps({ prefix: 'episode/' });

    expect(episodes.map(({ key, status, attempts }) => ({ key, status, attempts }))).toEqual([
      { key: 'episode/e1', status: 'done', attempts: 1 },
      { key: 'episode/e2', status: 'failed', attempts: 1 },
    ]);
    expect(episodes[1]?.error).toBe('timeout');
    expect(episodes[0]?.durationMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(episodes[0]?.finishedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(episodes[0]?.startedAt ?? ''),
    );
    expect(run.listSteps()).toHaveLength(3);
  });
});
