import { existsSync } from 'node:fs';

import Database from 'better-sqlite3';
import { z } from 'zod';

import { errorMessage } from '../errors.js';
import type { RunFiles } from '../store/run-files.js';
import { runFiles } from '../store/run-paths.js';

export interface WallTime {
  startedAt: string;
  /** The last step's end; null when no step has finished. */
  endedAt: string | null;
  /** From the first step's start to the last step's end: the run's wall time, pauses between invocations included. */
  elapsedMs: number | null;
  steps: number;
  /** Steps started but not done: running now, or left half-done by a run that was stopped. */
  unfinishedSteps: number;
}

const StepTimes = z.object({
  steps: z.number().int(),
  unfinished: z.number().int(),
  startedAt: z.string().nullable(),
  endedAt: z.string().nullable(),
});

/** The run's wall time from its step index, read-only (a run in progress keeps writing beside the report). */
export function readWallTime(files: RunFiles): WallTime | null {
  const file = files.path(runFiles.database);
  if (!existsSync(file)) {
    files.notes.push(`${runFiles.database} is missing: the run's wall time is unknown`);
    return null;
  }
  let database: Database.Database | undefined;
  try {
    database = new Database(file, { readonly: true, fileMustExist: true });
    const row = StepTimes.parse(
      database
        .prepare(
          `SELECT count(*) AS steps, coalesce(sum(status != 'done'), 0) AS unfinished, min(started_at) AS startedAt,
                  max(finished_at) AS endedAt FROM steps`,
        )
        .get(),
    );
    if (row.startedAt === null) return null;
    const elapsedMs = row.endedAt === null ? null : Date.parse(row.endedAt) - Date.parse(row.startedAt);
    return {
      startedAt: row.startedAt,
      endedAt: row.endedAt,
      elapsedMs,
      steps: row.steps,
      unfinishedSteps: row.unfinished,
    };
  } catch (error) {
    files.notes.push(`${runFiles.database} could not be read: ${errorMessage(error)}`);
    return null;
  } finally {
    database?.close();
  }
}
