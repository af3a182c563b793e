import { existsSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';

import { UserError, errorMessage } from '../errors.js';
import { inStep } from './current-step.js';
import type { RunDatabase } from './database.js';
import { describeIssues } from './describe-issues.js';
import { migrateLegacyStepPaths } from './legacy-step-paths.js';
import { parseLocations, relativizePaths, resolvePaths, runRoots } from './run-relative-paths.js';
import { removeTree } from './remove-tree.js';

/**
 * `interrupted`: an attempt started in an earlier process that died before finishing; the next request
 * for the step redoes it. `running`: an attempt in progress in this process.
 */
export type StepStatus = 'running' | 'interrupted' | 'done' | 'failed';

export interface StepRecord {
  key: string;
  status: StepStatus;
  /** How many times the step has been started, the current attempt included. */
  attempts: number;
  /** When the latest attempt started. */
  startedAt: string;
  finishedAt?: string;
  durationMs?: number;
  /** The message of the error that ended the latest attempt, for `failed` steps. */
  error?: string;
}

export interface StepContext {
  /** 1 on the first attempt; higher when redoing after an interruption or a failure. */
  attempt: number;
}

interface StepCleanupOptions {
  /**
   * The folder the step writes into (relative paths are inside the run directory). It is removed before
   * every attempt (unless `keepDirOnRedo`), so nothing half-written by an earlier attempt survives; and if it
   * is missing when the step is asked for again, the step is redone.
   */
  dir?: string;
  /**
   * Keep `dir` when the step is redone (it is still removed before a first attempt): for a step that continues from
   * what an interrupted attempt left there, such as a training's resume state. Its `fn` must tell a redo
   * (`attempt` > 1) and go on from that folder's contents, or clear what it cannot use.
   */
  keepDirOnRedo?: boolean;
  /** Further files or folders the step writes; a done step is redone if any of them has gone missing. */
  produces?: readonly string[];
  /**
   * Called before redoing a step that was started before (interrupted, failed, or done but its outputs
   * deleted); it runs before `dir` is removed, so it can still look at what the earlier attempt left.
   */
  onRedo?: (previous: StepRecord) => void | Promise<void>;
}

export interface StepOptions extends StepCleanupOptions {
  /** Writes the step's rows into mass.db in the same transaction that marks it done. */
  commit?: (database: RunDatabase) => void;
}

export interface StepWithOutputOptions<Schema extends z.ZodType> extends StepCleanupOptions {
  /** Validates what `fn` returns before it is stored, and the stored value whenever the step is skipped. */
  output: Schema;
  commit?: (database: RunDatabase, output: z.output<Schema>) => void;
}

const StepRow = z.object({
  key: z.string(),
  status: z.enum(['started', 'done', 'failed']),
  attempts: z.number().int().positive(),
  started_at: z.string(),
  finished_at: z.string().nullable(),
  duration_ms: z.number().nullable(),
  output_json: z.string().nullable(),
  /** Where `output_json` holds paths stored relative to the run directory: a JSON list of locations. */
  output_paths: z.string().nullable(),
  error: z.string().nullable(),
});
type StepRow = z.infer<typeof StepRow>;

/**
 * Runs each step of a run at most once to completion. A step's start is recorded before `fn` runs and its
 * completion after, so a command killed at any moment can simply be run again: done steps are skipped
 * (their stored output is returned), half-done ones are cleaned up and redone.
 *
 * A step recorded as started but not in flight here is taken to be from a dead process: this relies on
 * being the only process working on the run, which the run lock ensures.
 */
export class StepRunner {
  private readonly database: RunDatabase;
  private readonly runDirectory: string;
  /** The run directory, and its real path where they differ: a path under either is stored relative. */
  private readonly roots: string[];
  private readonly statements: ReturnType<typeof prepareStatements>;
  private readonly inFlight = new Set<string>();

  /**
   * Relative `dir` and `produces` paths are taken from `runDirectory`; `dir` must lie strictly inside it. Outputs
   * stored by an older mass, with absolute paths, are rewritten here once (see legacy-step-paths.ts).
   */
  constructor(database: RunDatabase, runDirectory: string) {
    this.database = database;
    this.runDirectory = resolve(runDirectory);
    this.roots = runRoots(this.runDirectory);
    this.statements = prepareStatements(database);
    migrateLegacyStepPaths(database, this.roots);
  }

  run<Schema extends z.ZodType>(
    key: string,
    fn: (context: StepContext) => z.input<Schema> | Promise<z.input<Schema>>,
    options: StepWithOutputOptions<Schema>,
  ): Promise<z.output<Schema>>;
  run(key: string, fn: (context: StepContext) => void | Promise<void>, options?: StepOptions): Promise<void>;
  async run(
    key: string,
    fn: (context: StepContext) => unknown,
    options: StepCleanupOptions & {
      output?: z.ZodType;
      commit?: (database: RunDatabase, output: unknown) => void;
    } = {},
  ): Promise<unknown> {
    if (key === '') throw new Error('a step key must not be empty');
    if (this.inFlight.has(key)) throw new Error(`step "${key}" is already running in this process`);
    const dir = options.dir === undefined ? undefined : this.stepDirectory(options.dir);
    const previous = this.readRow(key);
    if (previous?.status === 'done' && this.outputsExist(options)) {
      return this.decodeStoredOutput(key, previous, options.output);
    }

    // Taken before the key counts as in flight, so an unfinished previous attempt reads as interrupted.
    const previousRecord = previous === undefined ? undefined : this.toRecord(previous);
    this.inFlight.add(key);
    try {
      if (previousRecord !== undefined) await options.onRedo?.(previousRecord);
      const keep = options.keepDirOnRedo === true && previousRecord !== undefined;
      // An unfinished attempt's folder may hold what agent code wrote, nested past PATH_MAX.
      if (dir !== undefined && !keep) await removeTree(dir);
      return await this.attempt(key, fn, options);
    } finally {
      this.inFlight.delete(key);
    }
  }

  private async attempt(
    key: string,
    fn: (context: StepContext) => unknown,
    options: { output?: z.ZodType; commit?: (database: RunDatabase, output: unknown) => void },
  ): Promise<unknown> {
    const startTime = performance.now();
    const durationMs = (): number => performance.now() - startTime;
    const attempt = this.recordStart(key, new Date().toISOString());
    try {
      const result = await inStep({ key, runDirectory: this.runDirectory }, () => fn({ attempt }));
      const stored = this.encodeOutput(key, result, options.output);
      this.database.transaction(() => {
        this.finish(key, 'done', durationMs(), stored, null);
        options.commit?.(this.database, stored.output);
      })();
      return stored.output;
    } catch (error) {
      this.finish(key, 'failed', durationMs(), { outputJson: null, outputPaths: null }, errorMessage(error));
      throw error;
    }
  }

  private encodeOutput(key: string, result: unknown, schema: z.ZodType | undefined): StoredOutput {
    if (schema === undefined) return { outputJson: null, outputPaths: null, output: undefined };
    const validation = schema.safeParse(result);
    // The step's own code produced these, so failures are bugs in mass rather than something the user can fix.
    if (!validation.success) {
      throw new Error(`step "${key}" returned an invalid output: ${describeIssues(validation.error)}`);
    }
    const json = JSON.stringify(result);
    const relative = json === undefined ? undefined : relativizePaths(JSON.parse(json), this.roots);
    const outputJson = relative === undefined ? null : JSON.stringify(relative.value);
    const outputPaths = relative === undefined ? null : JSON.stringify(relative.locations);
    // What is returned is what was stored, read back, so a first run returns exactly what a resumed run will.
    const readBack = schema.safeParse(
      relative === undefined
        ? undefined
        : resolvePaths(relative.value, relative.locations, this.runDirectory, (why) => new Error(why)),
    );
    if (!readBack.success) {
      throw new Error(
        `step "${key}" returned an output that does not survive storage as JSON: ${describeIssues(readBack.error)}`,
      );
    }
    return { outputJson, outputPaths, output: readBack.data };
  }

  private decodeStoredOutput(key: string, row: StepRow, schema: z.ZodType | undefined): unknown {
    if (schema === undefined) return undefined;
    const damaged = (why: string) =>
      new UserError(`mass.db: the stored output of step "${key}" is damaged (${why}).`);
    let stored: unknown;
    try {
      stored = row.output_json === null ? undefined : JSON.parse(row.output_json);
    } catch (error) {
      throw damaged(errorMessage(error));
    }
    if (row.output_paths !== null && stored !== undefined) {
      const locations = parseLocations(row.output_paths);
      if (locations === undefined) throw damaged('its list of paths is not one');
      stored = resolvePaths(stored, locations, this.runDirectory, damaged);
    }
    const result = schema.safeParse(stored);
    if (!result.success) {
      throw new UserError(
        `step "${key}" is recorded as done in mass.db, but its stored output no longer fits what this version ` +
          `of mass expects (${describeIssues(result.error)}). Continue this run with the mass version that ` +
          'started it, or start a new run.',
      );
    }
    return result.data;
  }

  get(key: string): StepRecord | undefined {
    const row = this.readRow(key);
    return row === undefined ? undefined : this.toRecord(row);
  }

  /** Every recorded step, oldest first; with `prefix`, only keys starting with it (`episode/`). */
  list(options: { prefix?: string } = {}): StepRecord[] {
    const rows =
      options.prefix === undefined
        ? this.statements.selectAll.all()
        : this.statements.selectByPrefix.all({ prefix: options.prefix });
    return rows.map((row) => this.toRecord(parseRow(row)));
  }

  private readRow(key: string): StepRow | undefined {
    const row: unknown = this.statements.select.get(key);
    return row === undefined ? undefined : parseRow(row);
  }

  private outputsExist(options: StepCleanupOptions): boolean {
    const produced = [...(options.produces ?? []), ...(options.dir === undefined ? [] : [options.dir])];
    return produced.every((path) => existsSync(resolve(this.runDirectory, path)));
  }

  private recordStart(key: string, startedAt: string): number {
    const row: unknown = this.statements.start.get({ key, startedAt });
    return z.object({ attempts: z.number() }).parse(row).attempts;
  }

  private finish(
    key: string,
    status: 'done' | 'failed',
    durationMs: number,
    stored: Pick<StoredOutput, 'outputJson' | 'outputPaths'>,
    error: string | null,
  ): void {
    const finishedAt = new Date().toISOString();
    const { outputJson, outputPaths } = stored;
    this.statements.finish.run({ key, status, finishedAt, durationMs, outputJson, outputPaths, error });
  }

  private toRecord(row: StepRow): StepRecord {
    const status: StepStatus =
      row.status === 'started' ? (this.inFlight.has(row.key) ? 'running' : 'interrupted') : row.status;
    return {
      key: row.key,
      status,
      attempts: row.attempts,
      startedAt: row.started_at,
      ...(row.finished_at === null ? {} : { finishedAt: row.finished_at }),
      ...(row.duration_ms === null ? {} : { durationMs: row.duration_ms }),
      ...(row.error === null ? {} : { error: row.error }),
    };
  }

  // The folder is deleted recursively before each attempt, so it must never be the run itself or outside it.
  private stepDirectory(dir: string): string {
    const absolute = resolve(this.runDirectory, dir);
    const inside = relative(this.runDirectory, absolute);
    if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) {
      throw new Error(`step dir ${dir} must be a folder inside the run directory ${this.runDirectory}`);
    }
    return absolute;
  }
}

function prepareStatements(database: RunDatabase) {
  return {
    select: database.prepare('SELECT * FROM steps WHERE key = ?'),
    selectAll: database.prepare('SELECT * FROM steps ORDER BY started_at, key'),
    selectByPrefix: database.prepare(
      'SELECT * FROM steps WHERE substr(key, 1, length(:prefix)) = :prefix ORDER BY started_at, key',
    ),
    start: database.prepare(
      `INSERT INTO steps (key, status, attempts, started_at) VALUES (:key, 'started', 1, :startedAt)
       ON CONFLICT (key) DO UPDATE SET status = 'started', attempts = attempts + 1, started_at = :startedAt,
         finished_at = NULL, duration_ms = NULL, output_json = NULL, output_paths = NULL, error = NULL
       RETURNING attempts`,
    ),
    finish: database.prepare(
      `UPDATE steps SET status = :status, finished_at = :finishedAt, duration_ms = :durationMs,
         output_json = :outputJson, output_paths = :outputPaths, error = :error
       WHERE key = :key`,
    ),
  };
}

function parseRow(row: unknown): StepRow {
  const result = StepRow.safeParse(row);
  if (!result.success) {
    throw new UserError(`mass.db: a row of the steps table is damaged: ${describeIssues(result.error)}.`);
  }
  return result.data;
}

interface StoredOutput {
  outputJson: string | null;
  outputPaths: string | null;
  output: unknown;
}
