import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';

import { outageSettings } from '../../src/config/fault-tolerance.js';
import { RunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { EndpointPools } from '../../src/session/endpoint-pools.js';
import { openRun, type Run } from '../../src/store/run-store.js';
import { runStudy, WorkRunner } from '../../src/work/work-runner.js';
import type { WorkItem, WorkKind } from '../../src/work/work-item.js';

let root: string;
let run: Run<RunConfig>;
let pools: EndpointPools;

const open = () =>
  openRun({
    runsDirectory: root,
    name: 'study',
    configSchema: RunConfig,
    config: {
      name: 'study',
      suite: DEMO_SUITE,
      roles: { executor: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } },
    },
  });

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'mass-work-'));
  run = open();
  pools = new EndpointPools(outageSettings({}));
});
afterEach(async () => {
  await pools.close();
  run.close();
  await rm(root, { recursive: true, force: true });
});

/** A piece of work that counts its runs and returns `value` after `delayMs`. */
function counted(
  key: string,
  value: number,
  options: {
    runs?: string[];
    delayMs?: number;
    fails?: boolean;
    kind?: WorkKind;
    pool?: string;
    limit?: number;
  } = {},
): WorkItem<z.ZodNumber> {
  return {
    kind: options.kind ?? 'episode',
    key,
    output: z.number(),
    ...(options.pool ? { slots: { pool: options.pool, key: 'local', limit: options.limit ?? 1 } } : {}),
    perform: async () => {
      options.runs?.push(key);
      await new Promise((resolve) => setTimeout(resolve, options.delayMs ?? 0));
      if (options.fails) throw new Error(`${key} broke`);
      return value;
    },
  };
}

describe('the work runner', () => {
  it('runs finished work no more on resume: its stored output comes back, and it takes no slot', async () => {
    const runs: string[] = [];
    const first = new WorkRunner(run, pools);
    expect(await first.submit(counted('study/a', 1, { runs, pool: 'episodes' }))).toBe(1);
    run.close();
    run = open();
    // The only slot is held elsewhere: finished work must not wait for it.
    const held = await pools.slots('episodes', 'local', 1).acquire();
    const second = new WorkRunner(run, pools);
    expect(await second.submit(counted('study/a', 2, { runs, pool: 'episodes' }))).toBe(1);
    held();
    expect(runs).toEqual(['study/a']);
    expect(run.getStep('study/a')?.status).toBe('done');
  });

  it('runs work with the same key once, however many ask for it', async () => {
    const runs: string[] = [];
    const work = new WorkRunner(run, pools);
    const [a, b] = await Promise.all([
      work.submit(counted('study/shared', 5, { runs, delayMs: 10 })),
      work.submit(counted('study/shared', 6, { runs })),
    ]);
    expect([a, b, runs]).toEqual([5, 5, ['study/shared']]);
    expect(work.planned('episode')).toBe(1);
  });

  it('keeps to the slots of a named pool', async () => {
    let running = 0;
    let most = 0;
    const work = new WorkRunner(run, pools);
    const items = Array.from({ length: 6 }, (_, index) => ({
      ...counted(`study/slot/${index}`, index, { pool: 'judgments', limit: 2 }),
      perform: async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 15));
        running--;
        return index;
      },
    }));
    const results = await Promise.all(items.map((item) => work.submit(item)));
    expect(results).toEqual([0, 1, 2, 3, 4, 5]);
    expect(most).toBe(2);
  });

  it('settles every piece of work before it throws the first failure, and records the failed step', async () => {
    const finished: string[] = [];
    const work = new WorkRunner(run, pools, { onFinished: (kind, key) => finished.push(`${kind} ${key}`) });
    void work.submit(counted('study/broken', 0, { fails: true }));
    void work.submit(counted('study/slow', 1, { delayMs: 40, kind: 'grade' }));
    await expect(work.settle()).rejects.toThrow('study/broken broke');
    expect(finished).toEqual(['episode study/broken', 'grade study/slow']);
    expect(run.getStep('study/broken')?.status).toBe('failed');
    expect(run.getStep('study/slow')?.status).toBe('done');
  });

  it('runs dependent work once what it needs is there, and passes a failure of what it needs on', async () => {
    const work = new WorkRunner(run, pools);
    const episode = work.submit(counted('study/episode', 3));
    const grade = work.after('grade', episode, (value) =>
      counted(`study/grade/${value}`, value * 10, { kind: 'grade' }),
    );
    const nothing = work.after('grade', episode, () => null);
    const broken = work.submit(counted('study/episode-2', 0, { fails: true }));
    const never = work.after('judgment', broken, () => counted('study/judged', 1, { kind: 'judgment' }));
    await expect(work.settle()).rejects.toThrow('study/episode-2 broke');
    expect(await grade).toBe(30);
    expect(await nothing).toBeNull();
    await expect(never).rejects.toThrow('study/episode-2 broke');
    expect(run.getStep('study/judged')).toBeUndefined();
    expect([work.planned('episode'), work.planned('grade'), work.planned('judgment')]).toEqual([2, 2, 1]);
  });

  it('hands work the outage gate of its server, one per address, and checks outputs fresh or stored', async () => {
    const work = new WorkRunner(run, pools);
    const server = { baseUrl: 'http://127.0.0.1:9/v1' };
    let gate: unknown;
    const item: WorkItem<z.ZodNumber> = {
      ...counted('study/gated', 4),
      server,
      perform: async (context) => {
        gate = context.gate;
        return 4;
      },
      check: (output) => {
        if (output !== 4) throw new Error('not four');
      },
    };
    expect(await work.submit(item)).toBe(4);
    expect(gate).toBe(pools.gate(server));
    const refused = new WorkRunner(run, pools);
    await expect(
      refused.submit({
        ...item,
        check: () => {
          throw new Error('the stored output is refused');
        },
      }),
    ).rejects.toThrow('the stored output is refused');
  });

  it('runs a study: the plan emits work, the summary reads it all settled', async () => {
    const summary = await runStudy(
      {
        plan: (work) =>
          [1, 2, 3].map((value) => work.submit(counted(`study/n/${value}`, value, { delayMs: 5 * value }))),
        summarise: async (handles) => (await Promise.all(handles)).reduce((sum, value) => sum + value, 0),
      },
      new WorkRunner(run, pools),
    );
    expect(summary).toBe(6);
  });
});
