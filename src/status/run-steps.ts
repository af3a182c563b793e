import { existsSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { z } from 'zod';

import { UserError, errorMessage } from '../errors.js';
import { runFiles } from '../store/run-paths.js';
import { isAlive, readLockOwner, type LockOwner } from '../store/run-lock.js';

/** A row of `mass.db`'s steps table as `mass status` reads it. */
export interface StepRow {
  key: string;
  status: 'started' | 'done' | 'failed';
  attempts: number;
  startedAt: string;
  finishedAt: string | null;
  durationMs: number | null;
  error: string | null;
}

const Row = z.object({
  key: z.string(),
  status: z.enum(['started', 'done', 'failed']),
  attempts: z.number(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  duration_ms: z.number().nullable(),
  error: z.string().nullable(),
});

/**
 * Every step of the run, read from `mass.db` without taking the run lock and without writing: the command working on
 * the run goes on undisturbed (WAL lets a reader beside the writer).
 */
export function readRunSteps(runDirectory: string): StepRow[] {
  const path = join(runDirectory, runFiles.database);
  if (!existsSync(path)) {
    throw new UserError(
      `${runDirectory} has no ${runFiles.database}: it is not a run directory, or its run never started a step.`,
    );
  }
  let database: Database.Database;
  try {
    database = new Database(path, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new UserError(`${path} could not be opened to read its steps: ${errorMessage(error)}.`, {
      cause: error,
    });
  }
  try {
    database.pragma('busy_timeout = 10000');
    const rows = database
      .prepare(
        'SELECT key, status, attempts, started_at, finished_at, duration_ms, error FROM steps ORDER BY started_at, key',
      )
      .all();
    return rows.map((row) => {
      const parsed = Row.safeParse(row);
      if (!parsed.success) throw new UserError(`${path}: a row of the steps table is damaged.`);
      const value = parsed.data;
      return {
        key: value.key,
        status: value.status,
        attempts: value.attempts,
        startedAt: value.started_at,
        finishedAt: value.finished_at,
        durationMs: value.duration_ms,
        error: value.error,
      };
    });
  } finally {
    database.close();
  }
}

/** Who holds the run now: the lock's holder and whether it still runs (a holder on another host counts as running). */
export interface RunHolder {
  owner: LockOwner | null;
  alive: boolean;
}

export function readRunHolder(runDirectory: string): RunHolder {
  let owner: LockOwner | undefined;
  try {
    owner = readLockOwner(join(runDirectory, runFiles.lock));
  } catch {
    // A damaged lock file: nobody can be said to hold the run.
    owner = undefined;
  }
  if (owner === undefined) return { owner: null, alive: false };
  return { owner, alive: isAlive(owner) };
}
