/**
 * The GPUs of this process's episodes: each episode given GPUs (`sandboxGpus`) takes one of them for itself, from
 * before its sandbox opens until it closes, and waits while every one is taken. One pool per process
 * (`processGpuPool`), whatever lists the episodes name, so two lists that share a GPU never hand it out twice.
 */
export interface GpuLease {
  /** The GPU's index on the host (`/dev/nvidia<index>`). */
  readonly index: number;
  /** Gives it back; once, however often called. */
  release(): void;
}

interface Waiter {
  candidates: readonly number[];
  grant: (lease: GpuLease) => void;
}

export class GpuPool {
  private readonly taken = new Set<number>();
  private waiters: Waiter[] = [];

  /** The GPUs in use now. */
  get inUse(): number[] {
    return [...this.taken].sort((a, b) => a - b);
  }

  /** Waiting episodes. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** One of `candidates` for the caller alone: the first free one, or the first to be released. */
  acquire(candidates: readonly number[], signal?: AbortSignal): Promise<GpuLease> {
    if (candidates.length === 0) return Promise.reject(new Error('no GPU to choose from'));
    signal?.throwIfAborted();
    const free = this.take(candidates);
    if (free) return Promise.resolve(free);
    return new Promise<GpuLease>((resolve, reject) => {
      const waiter: Waiter = {
        candidates,
        grant: (lease) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(lease);
        },
      };
      const onAbort = (): void => {
        this.waiters = this.waiters.filter((other) => other !== waiter);
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private take(candidates: readonly number[]): GpuLease | null {
    const index = candidates.find((candidate) => !this.taken.has(candidate));
    if (index === undefined) return null;
    this.taken.add(index);
    let released = false;
    return {
      index,
      release: () => {
        if (released) return;
        released = true;
        this.taken.delete(index);
        this.wakeWaiter(index);
      },
    };
  }

  /** The longest-waiting episode that can use the GPU just freed gets it. */
  private wakeWaiter(index: number): void {
    const waiter = this.waiters.find((candidate) => candidate.candidates.includes(index));
    if (!waiter) return;
    this.waiters = this.waiters.filter((other) => other !== waiter);
    waiter.grant(this.take([index])!);
  }
}

/** The pool every episode of this process shares unless given another (tests). */
export const processGpuPool = new GpuPool();
