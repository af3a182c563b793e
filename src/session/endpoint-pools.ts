import type { OutageSettings } from '../config/fault-tolerance.js';
import { Semaphore } from '../model/concurrency.js';
import { outageGateFor, type OutageGate } from '../search/outage-gate.js';

/** A model server as the pools know it: its address, and the key its outage probe asks with. */
export interface PooledServer {
  baseUrl: string;
  apiKey?: string;
}

/**
 * A stage's pools per model server: one outage gate per server address (waiting out the server's outages, recording
 * lost work to the stage's `outages.jsonl`), and named slot pools (episodes per endpoint, judge calls per judge) of a
 * limit each. Work on one server never waits for another's outage or slots. Closed when the stage is done.
 *
 * A server with replicas (`roles.<role>.replicas`, declared by the model host: `src/model/replicas.ts`) has one gate
 * and one set of slots under its `baseUrl`: its calls spread over the replicas, a replica in outage is skipped while
 * another answers, and the gate waits only while every replica is down (its probe asks each).
 */
export class EndpointPools {
  private readonly gates = new Map<string, OutageGate>();
  private readonly slotPools = new Map<string, Semaphore>();

  constructor(
    private readonly outages: OutageSettings,
    /** Where lost work is recorded; none: not recorded. */
    private readonly outageLog?: string,
  ) {}

  /** The outage gate of a server, one per address. */
  gate(server: PooledServer): OutageGate {
    let gate = this.gates.get(server.baseUrl);
    if (!gate) {
      gate = outageGateFor(server, this.outages, this.outageLog);
      this.gates.set(server.baseUrl, gate);
    }
    return gate;
  }

  /** The slots of `pool` (e.g. `episodes`) for one key (a server address, a judge's name): `limit` at a time. */
  slots(pool: string, key: string, limit: number): Semaphore {
    const name = `${pool}\u0000${key}`;
    let slots = this.slotPools.get(name);
    if (!slots) {
      slots = new Semaphore(limit);
      this.slotPools.set(name, slots);
    }
    return slots;
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.gates.values()].map((gate) => gate.close()));
  }
}
