/**
 * Replicas of one model: several addresses serving the same model under the same name (`roles.<role>.replicas`).
 * Each call goes to the least loaded healthy replica (fewest calls in flight from this process; among equals, the one
 * picked longest ago). A replica whose call failed in transit (refused, reset, timed out, 429 or 5xx) is in outage:
 * it is skipped while another is healthy, for a cooldown that doubles while it keeps failing, and then gets one call
 * again. When every replica is in outage, calls go to the one whose cooldown ends first, and the caller's retries and
 * outage gate wait the outage out as they do for a single server.
 */
export interface ReplicaLease {
  /** The replica's address, as configured (e.g. `http://10.0.0.2:8000/v1`). */
  readonly address: string;
  /** The call is over: `ok` when the replica answered (whatever it said), `failed` when it failed in transit. */
  done(outcome: 'ok' | 'failed'): void;
}

export interface ReplicaState {
  address: string;
  /** Calls in flight now. */
  inFlight: number;
  /** Calls it answered, and calls that failed in transit, since the set was made. */
  answered: number;
  failed: number;
  /** True while it is in outage (skipped while another replica is healthy). */
  inOutage: boolean;
}

interface ReplicaSetOptions {
  /** The first cooldown after a failure (default 2 s); it doubles with each further failure in a row. */
  cooldownMs?: number;
  /** The longest cooldown (default 60 s). */
  maxCooldownMs?: number;
  now?: () => number;
}

interface Replica {
  address: string;
  inFlight: number;
  answered: number;
  failed: number;
  /** Failures in a row since its last answer. */
  failures: number;
  /** In outage until then (ms); 0 when healthy. */
  downUntil: number;
  lastPicked: number;
}

export class ReplicaSet {
  private readonly replicas: Replica[];
  private picks = 0;
  private readonly cooldownMs: number;
  private readonly maxCooldownMs: number;
  private readonly now: () => number;

  constructor(addresses: readonly string[], options: ReplicaSetOptions = {}) {
    if (addresses.length === 0) throw new RangeError('a replica set needs at least one address');
    this.replicas = [...new Set(addresses)].map((address) => ({
      address,
      inFlight: 0,
      answered: 0,
      failed: 0,
      failures: 0,
      downUntil: 0,
      lastPicked: -1,
    }));
    this.cooldownMs = options.cooldownMs ?? 2_000;
    this.maxCooldownMs = options.maxCooldownMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  get addresses(): string[] {
    return this.replicas.map((replica) => replica.address);
  }

  /** The replica for the next call, counted in flight until the lease is `done`. */
  pick(): ReplicaLease {
    const now = this.now();
    const healthy = this.replicas.filter((replica) => replica.downUntil <= now);
    const chosen =
      healthy.length > 0
        ? leastLoaded(healthy)
        : this.replicas.reduce((best, replica) => (replica.downUntil < best.downUntil ? replica : best));
    chosen.inFlight++;
    chosen.lastPicked = this.picks++;
    let finished = false;
    return {
      address: chosen.address,
      done: (outcome) => {
        if (finished) return;
        finished = true;
        chosen.inFlight--;
        this.settle(chosen, outcome);
      },
    };
  }

  /** Each replica's load, answers, failures and outage, in the configured order. */
  states(): ReplicaState[] {
    const now = this.now();
    return this.replicas.map(({ address, inFlight, answered, failed, downUntil }) => ({
      address,
      inFlight,
      answered,
      failed,
      inOutage: downUntil > now,
    }));
  }

  private settle(replica: Replica, outcome: 'ok' | 'failed'): void {
    if (outcome === 'ok') {
      replica.answered++;
      replica.failures = 0;
      replica.downUntil = 0;
      return;
    }
    replica.failed++;
    replica.failures++;
    const cooldown = Math.min(this.maxCooldownMs, this.cooldownMs * 2 ** (replica.failures - 1));
    replica.downUntil = this.now() + cooldown;
  }
}

/** Fewest calls in flight; among equals, the one picked longest ago (so equal replicas take turns). */
function leastLoaded(replicas: readonly Replica[]): Replica {
  return replicas.reduce((best, replica) =>
    replica.inFlight < best.inFlight ||
    (replica.inFlight === best.inFlight && replica.lastPicked < best.lastPicked)
      ? replica
      : best,
  );
}

const declared = new Map<string, ReplicaSet>();

function key(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}

/**
 * Declares that the endpoint at `baseUrl` is served by `baseUrl` and `replicas` together, for every client of this
 * process that is given `baseUrl` (the recording proxies, the judge's and optimizer's clients, the outage gates): they
 * all share one set, so load and outages are counted across them. No further replicas: the declaration is dropped.
 * Declaring the same addresses again keeps the set and its counts.
 */
export function declareReplicas(
  baseUrl: string,
  replicas: readonly string[] = [],
  options: ReplicaSetOptions = {},
): ReplicaSet | null {
  const addresses = [...new Set([key(baseUrl), ...replicas.map(key)])];
  if (addresses.length < 2) {
    declared.delete(key(baseUrl));
    return null;
  }
  const existing = declared.get(key(baseUrl));
  if (existing && existing.addresses.join('\n') === addresses.join('\n')) return existing;
  const set = new ReplicaSet(addresses, options);
  declared.set(key(baseUrl), set);
  return set;
}

/** The replicas declared for `baseUrl` (`declareReplicas`), or null when it is served at that one address. */
export function replicaSetOf(baseUrl: string): ReplicaSet | null {
  return declared.get(key(baseUrl)) ?? null;
}

/** Every address of the endpoint at `baseUrl`: its declared replicas, or the address itself. */
export function replicaAddresses(baseUrl: string): string[] {
  return replicaSetOf(baseUrl)?.addresses ?? [key(baseUrl)];
}
