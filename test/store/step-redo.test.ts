import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';

import { openTestRun, temporaryDirectory } from './__fixtures__/test-run.js';

describe('a step', () => {
  it('that throws is recorded as failed with its message, and redone from a clean folder', async () => {
    const run = openTestRun(temporaryDirectory());
    const failing = (): void => {
      mkdirSync(run.path('episodes', 'e1'), { recursive: true });
      writeFileSync(run.path('episodes', 'e1', 'half.json'), '{');
      throw new Error('the sandbox died');
    };

    await expect(run.step('episode/e1', failing, { dir: 'episodes/e1' })).rejects.toThrow('the sandbox died');
    expect(run.getStep('episode/e1')).toMatchObject({
      status: 'failed',
      attempts: 1,
      error: 'the sandbox died',
    });

    const onRedo = vi.fn();
    await run.step(
      'episode/e1',
      () => {
        expect(existsSync(run.path('episodes', 'e1', 'half.json'))).toBe(false);
      },
      { dir: 'episodes/e1', onRedo },
    );

    expect(onRedo).toHaveBeenCalledWith(
      expect.objectContaining({ status: 'failed', error: 'the sandbox died' }),
    );
    expect(run.getStep('episode/e1')).toMatchObject({ status: 'done', attempts: 2 });
    expect(run.getStep('episode/e1')?.error).toBeUndefined();
  });

  it('with keepDirOnRedo finds on a redo what the interrupted attempt left, and starts a first attempt clean', async () => {
    const run = openTestRun(temporaryDirectory());
    mkdirSync(run.path('train', 'L1'), { recursive: true });
    writeFileSync(run.path('train', 'L1', 'stale.json'), '{}');
    const attempts: Array<{ attempt: number; found: string[] }> = [];
    const train = async ({ attempt }: { attempt: number }) => {
      attempts.push({
        attempt,
        found: ['stale.json', 'state.json'].filter((file) => existsSync(run.path('train', 'L1', file))),
      });
      mkdirSync(run.path('train', 'L1'), { recursive: true });
      writeFileSync(run.path('train', 'L1', 'state.json'), '{"step": 50}');
      if (attempt === 1) throw new Error('killed at step 60');
    };
    const options = { dir: 'train/L1', keepDirOnRedo: true };

    await expect(run.step('rsi/L1/train', train, options)).rejects.toThrow('killed at step 60');
    await run.step('rsi/L1/train', train, options);
    expect(attempts).toEqual([
      { attempt: 1, found: [] },
      { attempt: 2, found: ['state.json'] },
    ]);
    expect(run.getStep('rsi/L1/train')).toMatchObject({ status: 'done', attempts: 2 });

    // Done, and its folder deleted: redone, with nothing to find.
    rmSync(run.path('train', 'L1'), { recursive: true });
    await run.step('rsi/L1/train', train, options);
    expect(attempts.at(-1)).toEqual({ attempt: 3, found: [] });
  });

  it('that is done is redone when a file it produced has been deleted', async () => {
    const run = openTestRun(temporaryDirectory());
    const writeVerdict = vi.fn(() => writeFileSync(run.path('verdict.json'), '{}'));
    await run.step('verdict/1', writeVerdict, { produces: ['verdict.json'] });
    await run.step('verdict/1', writeVerdict, { produces: ['verdict.json'] });
    expect(writeVerdict).toHaveBeenCalledTimes(1);

    rmSync(run.path('verdict.json'));
    await run.step('verdict/1', writeVerdict, { produces: ['verdict.json'] });

    expect(writeVerdict).toHaveBeenCalledTimes(2);
    expect(run.getStep('verdict/1')).toMatchObject({ status: 'done', attempts: 2 });
  });

  it('refuses a dir that is the run itself or lies outside it, since it is deleted before each attempt', async () => {
    const run = openTestRun(temporaryDirectory());

    await expect(run.step('bad', () => undefined, { dir: '.' })).rejects.toThrow(
      'must be a folder inside the run',
    );
    await expect(run.step('bad', () => undefined, { dir: '../other' })).rejects.toThrow(
      'must be a folder inside',
    );
    expect(existsSync(run.directory)).toBe(true);
  });

  it('refuses to start twice at once in the same process', async () => {
    const run = openTestRun(temporaryDirectory());
    let finish = (): void => undefined;
    const first = run.step('train/L1', () => new Promise<void>((resolve) => (finish = resolve)));

    await expect(run.step('train/L1', () => undefined)).rejects.toThrow('already running in this process');
    expect(run.getStep('train/L1')?.status).toBe('running');
    finish();
    await first;
    expect(run.getStep('train/L1')?.status).toBe('done');
  });
});
