import type { z } from 'zod';

import type { EndpointPools } from '../session/endpoint-pools.js';
import type { Run } from '../store/run-store.js';
import type { WorkItem, WorkKind } from './work-item.js';

export interface WorkRunnerHooks {
  /**
   * Called as a piece of work starts running, its slot held (not for a finished step): throwing (a spent budget)
   * stops it unrun.
   */
  beforeWork?: (kind: WorkKind, key: string) => void;
  /** Called once per piece of work when it has ended, done or failed (a finished step skipped on resume too). */
  onFinished?: (kind: WorkKind, key: string) => void;
}

/**
 * Runs a study's work over a session's named pools, resumably: each piece of work is a step of the run, so a
 * finished one is not run again (its stored output comes back, and it takes no slot); the one under way when a run
 * was killed is redone. Work with the same key is run once, whoever asks for it. `settle` waits for every piece, so
 * none is still writing when the study closes its files, and then throws the first failure: no error is lost.
 */
export class WorkRunner {
  private readonly submitted = new Map<string, Promise<unknown>>();
  private readonly pending: Array<Promise<unknown>> = [];
  private readonly counts = new Map<WorkKind, number>();

  constructor(
    private readonly run: Run<unknown>,
    private readonly pools: EndpointPools,
    private readonly hooks: WorkRunnerHooks = {},
  ) {}

  /** Runs `item` (once per key: a second submission gets the first one's result). */
  submit<Schema extends z.ZodType, Prepared>(item: WorkItem<Schema, Prepared>): Promise<z.output<Schema>> {
    if (this.submitted.has(item.key)) return this.once(item);
    this.count(item.kind);
    return this.track(this.once(item));
  }

  /**
   * Work that needs other work's results: `make` is called with them once they are there, and what it returns is
   * submitted (null: nothing to do). Counted as planned `kind` now.
   */
  after<Needed, Schema extends z.ZodType, Prepared>(
    kind: WorkKind,
    needs: Promise<Needed>,
    make: (needed: Needed) => WorkItem<Schema, Prepared> | null,
  ): Promise<z.output<Schema> | null> {
    this.count(kind);
    return this.track(
      needs.then((needed) => {
        const item = make(needed);
        if (item === null) return null;
        if (item.kind !== kind) throw new Error(`work ${item.key} is ${item.kind}, planned as ${kind}`);
        return this.once(item);
      }),
    );
  }

  /** How many pieces of work of `kind` have been planned so far. */
  planned(kind: WorkKind): number {
    return this.counts.get(kind) ?? 0;
  }

  /** Waits for every piece of work planned so far (and any planned meanwhile), then throws the first failure. */
  async settle(): Promise<void> {
    let seen = 0;
    let failure: { reason: unknown } | undefined;
    while (seen < this.pending.length) {
      const batch = this.pending.slice(seen);
      seen = this.pending.length;
      for (const outcome of await Promise.allSettled(batch)) {
        if (outcome.status === 'rejected' && !failure) failure = { reason: outcome.reason };
      }
    }
    if (failure) throw failure.reason;
  }

  /** The result of the work keyed `item.key`, run on its first request. */
  private once<Schema extends z.ZodType, Prepared>(
    item: WorkItem<Schema, Prepared>,
  ): Promise<z.output<Schema>> {
    let result = this.submitted.get(item.key) as Promise<z.output<Schema>> | undefined;
    if (!result) {
      result = this.execute(item);
      this.submitted.set(item.key, result);
    }
    return result;
  }

  private count(kind: WorkKind): void {
    this.counts.set(kind, this.planned(kind) + 1);
  }

  /**
   * Work whose later pieces depend on what earlier ones gave, run as a chain (a trial run again while infrastructure
   * lost it): `settle` waits for the chain too, and its failure is the study's.
   */
  track<T>(work: Promise<T>): Promise<T> {
    this.pending.push(work);
    // Handled here so that a failure waits for `settle` rather than stopping the process.
    work.catch(() => {});
    return work;
  }

  private async execute<Schema extends z.ZodType, Prepared>(
    item: WorkItem<Schema, Prepared>,
  ): Promise<z.output<Schema>> {
    try {
      const output = await this.run.step(
        item.key,
        async ({ attempt }) => {
          const prepared = (item.prepare ? await item.prepare() : undefined) as Prepared;
          const slots = item.slots && this.pools.slots(item.slots.pool, item.slots.key, item.slots.limit);
          const release = await slots?.acquire();
          try {
            // Asked once the slot is held: work queued for a slot while the budget ran out is refused too.
            this.hooks.beforeWork?.(item.kind, item.key);
            const gate = item.server && this.pools.gate(item.server);
            return await item.perform({ attempt, ...(gate ? { gate } : {}) }, prepared);
          } finally {
            release?.();
          }
        },
        {
          output: item.output,
          ...(item.dir === undefined ? {} : { dir: item.dir }),
          ...(item.keepDirOnRedo === undefined ? {} : { keepDirOnRedo: item.keepDirOnRedo }),
          ...(item.produces === undefined ? {} : { produces: item.produces }),
        },
      );
      item.check?.(output);
      return output;
    } finally {
      this.hooks.onFinished?.(item.kind, item.key);
    }
  }
}

/**
 * A study: a plan that emits its work to a runner and returns what the summary needs (handles on the work's
 * results), and a summariser that turns them, all settled, into the study's record.
 */
export interface Study<Planned, Summary> {
  plan: (work: WorkRunner) => Promise<Planned> | Planned;
  summarise: (planned: Planned) => Promise<Summary> | Summary;
}

/** Plans the study, runs all its work to the end (throwing the first failure), then summarises it. */
export async function runStudy<Planned, Summary>(
  study: Study<Planned, Summary>,
  work: WorkRunner,
): Promise<Summary> {
  let planned: Planned;
  try {
    planned = await study.plan(work);
  } catch (error) {
    // Work planned before the plan failed still ends before the failure is thrown.
    await work.settle().catch(() => {});
    throw error;
  }
  await work.settle();
  return study.summarise(planned);
}
