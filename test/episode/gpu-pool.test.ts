import { describe, expect, it } from 'vitest';

import { GpuPool } from '../../src/episode/gpu-pool.js';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// These machines have no GPU: the pool is plain bookkeeping, tested here; what a sandbox shows of a GPU is tested
// through its bwrap arguments (sandbox-gpu.test.ts).
describe('the GPU pool', () => {
  it('gives each concurrent episode a GPU of its own, and makes the rest wait their turn', async () => {
    const pool = new GpuPool();
    const holders = new Map<number, number>();
    const violations: string[] = [];
    let mostAtOnce = 0;
    const episode = async (id: number): Promise<number> => {
      const lease = await pool.acquire([0, 1]);
      if (holders.has(lease.index))
        violations.push(`${id} got ${lease.index}, held by ${holders.get(lease.index)}`);
      holders.set(lease.index, id);
      mostAtOnce = Math.max(mostAtOnce, holders.size);
      await tick(1 + ((id * 7) % 5));
      holders.delete(lease.index);
      lease.release();
      lease.release(); // a second release changes nothing
      return lease.index;
    };
    const used = await Promise.all(Array.from({ length: 12 }, (_, id) => episode(id)));
    expect(violations).toEqual([]);
    expect(mostAtOnce).toBe(2);
    expect(new Set(used)).toEqual(new Set([0, 1]));
    expect(pool.inUse).toEqual([]);
    expect(pool.waiting).toBe(0);
  });

  it('never hands out a GPU twice to lists that share it', async () => {
    const pool = new GpuPool();
    const first = await pool.acquire([1, 2]);
    const second = await pool.acquire([0, 1]);
    expect([first.index, second.index]).toEqual([1, 0]);
    const third = await pool.acquire([1, 2]);
    expect(third.index).toBe(2);
    let fourth: number | null = null;
    const waiting = pool.acquire([0, 1]).then((lease) => (fourth = lease.index));
    await tick(5);
    expect(fourth).toBeNull();
    third.release(); // GPU 2 is not one the waiter may use
    await tick(5);
    expect(fourth).toBeNull();
    first.release();
    await waiting;
    expect(fourth).toBe(1);
    expect(pool.inUse).toEqual([0, 1]);
  });

  it('lets a waiting episode give up without taking a GPU later', async () => {
    const pool = new GpuPool();
    const held = await pool.acquire([3]);
    const stop = new AbortController();
    const waiting = pool.acquire([3], stop.signal);
    expect(pool.waiting).toBe(1);
    stop.abort(new Error('episode stopped'));
    await expect(waiting).rejects.toThrow('episode stopped');
    expect(pool.waiting).toBe(0);
    held.release();
    expect(pool.inUse).toEqual([]);
    await expect(pool.acquire([])).rejects.toThrow(/no GPU/);
  });
});
