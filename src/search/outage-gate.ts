import type { OutageSettings } from '../config/fault-tolerance.js';
import { rm } from 'node:fs/promises';

import { z } from 'zod';

import type { EpisodeRecord } from '../records/episode-record.js';
import { errorMessage, SystemError } from '../errors.js';
import { replicaAddresses } from '../model/replicas.js';
import { isTransportFailure } from '../model/retry.js';
import { JsonlAppender } from '../proxy/jsonl-appender.js';
import { durationMs, timerDelay } from '../timer-duration.js';

/** One piece of work lost because the model server was down, as `outages.jsonl` in the run directory records it. */
export const LostWork = z.object({
  schemaVersion: z.literal(1),
  kind: z.literal('lost-to-outage'),
  at: z.string(),
  /** What was lost and will be redone, e.g. `episode L0-tiny-sum-v1` or `judge L0/tiny-sum v1 vs v0`. */
  what: z.string(),
  error: z.string(),
  /** Since when the server has been failing (the first loss of this outage). */
  outageSince: z.string(),
});
export type LostWork = z.infer<typeof LostWork>;

export interface OutageGateOptions {
  /** True when the model server answers again (a `GET /models`). */
  probe: () => Promise<boolean>;
  /** How long an outage may last, from the first work it cost to the first work done after it. */
  budgetMs: number;
  probeIntervalMs: number;
  /** The server, for messages. */
  server: string;
  /** Where lost work is recorded (`outages.jsonl`); none: not recorded. */
  logFile?: string;
}

/** The outage lasted past its budget: the command stops, and the same command resumes it once the server is back. */
export class OutageBudgetSpentError extends SystemError {}

/**
 * Keeps a run from burning through its queue while its model server is down. Work that fails because the server
 * stayed unavailable past its calls' retries (an episode whose calls kept failing, a judge or optimizer call) is
 * recorded as lost, then waits here until the server answers again and is redone: it never becomes a result. New work
 * waits while an outage is going on. An outage ends at the first work done after it; one that lasts past its
 * budget stops every waiter with `OutageBudgetSpentError`, and nothing finished before is touched.
 */
export class OutageGate {
  /** Since when the server has been failing; null when it is not. */
  private since: number | null = null;
  private waiting: Promise<void> | null = null;
  private spent: OutageBudgetSpentError | null = null;
  /** Opened at the first loss: a run without outages has no `outages.jsonl`. */
  private log: JsonlAppender | null = null;
  readonly lost: LostWork[] = [];

  constructor(private readonly options: OutageGateOptions) {}

  /** Before new work: waits while the server is down; throws once an outage has spent its budget. */
  async ready(): Promise<void> {
    if (this.spent) throw this.spent;
    if (this.waiting) await this.waiting;
  }

  /** Work went through: the server works, any outage is over. */
  succeeded(): void {
    if (!this.waiting) this.since = null;
  }

  /**
   * Work was lost to the server being down: records it, then waits until the server answers again (one wait shared
   * by everything lost in the same outage). The caller redoes the work afterwards. Throws once the outage has lasted
   * past its budget.
   */
  async lostToOutage(what: string, error: string): Promise<void> {
    const now = Date.now();
    this.since ??= now;
    const row: LostWork = {
      schemaVersion: 1,
      kind: 'lost-to-outage',
      at: new Date(now).toISOString(),
      what,
      error,
      outageSince: new Date(this.since).toISOString(),
    };
    this.lost.push(row);
    // The wait starts at once: work that asks `ready()` from now on waits too.
    if (!this.spent) this.waiting ??= this.waitForServer(this.since).finally(() => (this.waiting = null));
    const waiting = this.waiting;
    // Awaited below; until then a rejection (the budget spent) must not count as unhandled.
    waiting?.catch(() => undefined);
    if (this.options.logFile) {
      this.log ??= new JsonlAppender(this.options.logFile);
      await this.log.append(JSON.stringify(row));
    }
    if (this.spent) throw this.spent;
    await waiting;
  }

  async close(): Promise<void> {
    await this.log?.close();
  }

  private async waitForServer(since: number): Promise<void> {
    const { budgetMs, probeIntervalMs } = this.options;
    for (;;) {
      const remaining = since + budgetMs - Date.now();
      if (remaining <= 0) {
        this.spent = new OutageBudgetSpentError(
          `the model server ${this.options.server} has been failing for ${((Date.now() - since) / 1000).toFixed(1)} s, past the outage budget of ${budgetMs / 1000} s (faultTolerance.outageSeconds). Finished work is kept: run the same command again to resume once the server is back.`,
        );
        throw this.spent;
      }
      if (await this.options.probe().catch(() => false)) return;
      await new Promise((resolve) => setTimeout(resolve, timerDelay(Math.min(probeIntervalMs, remaining))));
    }
  }
}

/**
 * Asks an OpenAI-style server whether it is up: `GET <baseUrl>/models` answers 2xx within a few seconds. A server
 * with replicas (`declareReplicas`) is up when any of its replicas is.
 */
export function modelsEndpointProbe(baseUrl: string, apiKey?: string): () => Promise<boolean> {
  const answers = async (address: string) => {
    const url = `${address}/models`;
    try {
      const response = await fetch(url, {
        headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
        signal: AbortSignal.timeout(5_000),
      });
      await response.body?.cancel();
      return response.ok;
    } catch {
      return false;
    }
  };
  return async () => (await Promise.all(replicaAddresses(baseUrl).map(answers))).some(Boolean);
}

/**
 * The gate of one model server (`server.baseUrl`, asked with `GET /models`), with the run's outage settings, recording
 * lost work to `logFile` (a run's `outages.jsonl`).
 */
export function outageGateFor(
  server: { baseUrl: string; apiKey?: string },
  settings: OutageSettings,
  logFile?: string,
): OutageGate {
  return new OutageGate({
    probe: modelsEndpointProbe(server.baseUrl, server.apiKey),
    budgetMs: durationMs(settings.budgetSeconds, 's'),
    probeIntervalMs: durationMs(settings.probeSeconds, 's'),
    server: server.baseUrl,
    ...(logFile === undefined ? {} : { logFile }),
  });
}

/**
 * Runs one episode through the gate: it waits while the server is down, and an episode that failed because the
 * server stayed unavailable past its calls' retries is recorded as lost (and handed to `onLost`), its half-made
 * directory removed, and run again once the server answers. Any other outcome, success or failure, is the episode's
 * result.
 */
export async function runEpisodeThroughOutages<T extends { record: EpisodeRecord }>(
  gate: OutageGate,
  episode: { id: string; outDir: string },
  run: () => Promise<T>,
  onLost?: (error: string) => void,
): Promise<T> {
  for (;;) {
    await gate.ready();
    const result = await run();
    const { failure } = result.record;
    if (failure?.cause !== 'server_unavailable') {
      gate.succeeded();
      return result;
    }
    const error = `${failure.kind}: ${failure.detail}`;
    onLost?.(error);
    await gate.lostToOutage(`episode ${episode.id}`, error);
    await rm(episode.outDir, { recursive: true, force: true });
  }
}

/**
 * A model call (a judge's, an optimizer's) through the gate: a transport failure that outlasted the call's retries
 * is recorded as lost (`what`; handed to `onLost`) and the call redone once the server answers again; it never
 * becomes a result. Any other error is thrown.
 */
export async function callThroughOutages<T>(
  gate: OutageGate,
  what: string,
  call: () => Promise<T>,
  onLost?: (error: string) => void,
): Promise<T> {
  for (;;) {
    await gate.ready();
    let failure: unknown;
    try {
      const result = await call();
      gate.succeeded();
      return result;
    } catch (error) {
      if (!isTransportFailure(error)) throw error;
      failure = error;
    }
    const error = errorMessage(failure);
    onLost?.(error);
    await gate.lostToOutage(what, error);
  }
}
