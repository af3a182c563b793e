import { relative } from 'node:path';

import type { RunConfig } from '../config/run-config.js';
import { readThroughputRecord, type ThroughputRecord } from '../doctor/throughput-record.js';

/** The output tokens per second of the executor's server at the configured concurrency, and what the figure rests on. */
export interface PlanThroughput {
  outputTokensPerSecond: number;
  basis: string;
  /** Where it comes from: `--throughput`, or the record `mass doctor` wrote (its path and when it measured). */
  source: { kind: 'flag' } | { kind: 'doctor-record'; path: string; measuredAt: string };
}

/** The throughput a plan's wall time rests on: `--throughput` when given, else `mass doctor`'s record when usable. */
export interface ThroughputChoice {
  throughput: PlanThroughput | null;
  /** Why a record that is there was not used (another model measured); null otherwise. */
  note: string | null;
}

/**
 * `--throughput` when given; else the record at `recordPath` (`mass doctor` writes it to the run directory), summed
 * over the executor model's endpoints it measured (each replica is one); else nothing, and the plan assumes a figure.
 */
export async function chooseThroughput(options: {
  config: RunConfig;
  given: number | null;
  recordPath: string;
}): Promise<ThroughputChoice> {
  if (options.given !== null) {
    return {
      throughput: {
        outputTokensPerSecond: options.given,
        basis: `doctor throughput: ${options.given} output tokens/s (--throughput)`,
        source: { kind: 'flag' },
      },
      note: null,
    };
  }
  const record = await readThroughputRecord(options.recordPath);
  if (record === null) return { throughput: null, note: null };
  return fromRecord(record, options.config, options.recordPath);
}

function fromRecord(record: ThroughputRecord, config: RunConfig, path: string): ThroughputChoice {
  const model = config.roles.executor.model;
  const shown = relative(process.cwd(), path) || path;
  const measured = record.endpoints.filter(
    (endpoint) => endpoint.model === model && endpoint.roles.includes('executor'),
  );
  if (measured.length === 0) {
    const others = record.endpoints.map((endpoint) => endpoint.model).join(', ');
    return {
      throughput: null,
      note: `${shown} measured ${others}, not the executor's ${model}: run mass doctor again`,
    };
  }
  const tokens = measured.reduce((sum, endpoint) => sum + endpoint.throughput.outputTokensPerSecond, 0);
  const atOnce = measured.reduce((sum, endpoint) => sum + endpoint.throughput.concurrency, 0);
  const replicas = measured.length > 1 ? ` over ${measured.length} replicas` : '';
  return {
    throughput: {
      outputTokensPerSecond: tokens,
      basis:
        `doctor throughput: ${Math.round(tokens)} output tokens/s at ${atOnce} calls at once${replicas}, ` +
        `measured ${record.measuredAt} (${shown})`,
      source: { kind: 'doctor-record', path, measuredAt: record.measuredAt },
    },
    note: null,
  };
}
