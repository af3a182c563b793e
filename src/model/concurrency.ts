/** A counting semaphore: at most `limit` holders at once, the rest wait in arrival order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`concurrency limit must be a positive integer, got ${limit}`);
  }

  async acquire(): Promise<() => void> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    };
  }

  get inUse(): number {
    return this.active;
  }
}

const endpointSemaphores = new Map<string, Semaphore>();

/**
 * The semaphore shared by every client of one endpoint in this process, so that concurrent episodes, judges and
 * optimizers together stay under the endpoint's limit. The first caller's limit wins; a later caller asking for a
 * different limit gets the existing one.
 */
export function endpointSemaphore(endpoint: string, limit: number): Semaphore {
  let semaphore = endpointSemaphores.get(endpoint);
  if (!semaphore) {
    semaphore = new Semaphore(limit);
    endpointSemaphores.set(endpoint, semaphore);
  }
  return semaphore;
}
