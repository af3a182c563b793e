import { join } from 'node:path';

import { runFiles } from '../store/run-paths.js';
import { readOptional } from './optional-file.js';
import type { RunHolder } from './run-steps.js';

/** A judge's or optimizer's model call the run's process recorded as begun and not answered. */
export interface OpenModelCallRow {
  seq: number;
  startedAt: string;
  role: string;
  model: string;
  endpoint: string;
  step: string;
  promptChars: number;
}

/** `model-calls-open.json`: who wrote it (`<hostname>:<pid>`) and its calls; none when it is missing or unreadable. */
export interface OpenModelCalls {
  writer: string | null;
  calls: OpenModelCallRow[];
}

/** Reads the run's open model calls. The file is replaced whole, never torn; one damaged by hand reads as none. */
export async function readOpenModelCalls(runDirectory: string): Promise<OpenModelCalls> {
  const text = await readOptional(join(runDirectory, runFiles.modelCallsOpen));
  if (text === undefined) return { writer: null, calls: [] };
  let record: { writer?: unknown; calls?: unknown };
  try {
    record = JSON.parse(text) as typeof record;
  } catch {
    return { writer: null, calls: [] };
  }
  const calls = Array.isArray(record.calls)
    ? (record.calls as Array<Record<string, unknown>>).flatMap((call) => {
        if (typeof call !== 'object' || call === null) return [];
        const { seq, startedAt, role, model, endpoint, step, promptChars } = call;
        if (typeof seq !== 'number' || typeof startedAt !== 'string' || typeof step !== 'string') return [];
        return [
          {
            seq,
            startedAt,
            role: typeof role === 'string' ? role : 'unknown',
            model: typeof model === 'string' ? model : 'unknown',
            endpoint: typeof endpoint === 'string' ? endpoint : '',
            step,
            promptChars: typeof promptChars === 'number' ? promptChars : 0,
          },
        ];
      })
    : [];
  return { writer: typeof record.writer === 'string' ? record.writer : null, calls };
}

/**
 * The calls of the file that are in flight now: written by the process that holds the run (same host and pid) and
 * begun since it took the run. A file a killed process left names calls that will never end: its writer no longer
 * holds the run (or holds nothing), so none of its calls is live.
 */
export function liveModelCalls(open: OpenModelCalls, holder: RunHolder): OpenModelCallRow[] {
  const owner = holder.owner;
  if (!holder.alive || owner === null || open.writer !== `${owner.hostname}:${owner.pid}`) return [];
  const heldSinceMs = Date.parse(owner.acquiredAt);
  return open.calls.filter((call) => Date.parse(call.startedAt) >= heldSinceMs - 1000);
}
