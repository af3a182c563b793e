/**
 * Stops a generation's concurrent work cleanly. After the first failure (or an abort) no new step starts, and
 * the steps already running are awaited before the failure is thrown: a step left running in the background
 * would still be in flight when the caller resumes the generation in the same process.
 */
export class WorkGate {
  private failure: { error: unknown } | undefined;

  constructor(private readonly signal?: AbortSignal) {}

  get stopped(): boolean {
    return this.failure !== undefined || (this.signal?.aborted ?? false);
  }

  /** Keeps the first failure; later ones are consequences or coincidences. */
  fail(error: unknown): void {
    this.failure ??= { error };
  }

  throwIfStopped(): void {
    if (this.failure) throw this.failure.error;
    this.signal?.throwIfAborted();
  }

  /** Runs `work` on each item, at most `limit` at once, in order; see the class comment for failures. */
  async forEach<Item>(
    items: readonly Item[],
    limit: number,
    work: (item: Item, index: number) => Promise<void>,
  ): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (!this.stopped && next < items.length) {
        const index = next++;
        try {
          await work(items[index]!, index);
        } catch (error) {
          this.fail(error);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
    this.throwIfStopped();
  }

  /** Runs `work` now; a failure stops the gate (and is thrown once everything started has settled). */
  async track<Result>(work: () => Promise<Result>): Promise<Result | undefined> {
    try {
      return await work();
    } catch (error) {
      this.fail(error);
      return undefined;
    }
  }
}
