import Database from 'better-sqlite3';

import { UserError, errorMessage } from '../errors.js';
import { runDatabaseMigrations } from './migrations.js';

export type RunDatabase = Database.Database;

const busyTimeoutMilliseconds = 10_000;

/**
 * Opens (creating if needed) a run's SQLite index and brings its schema up to date. WAL lets readers such
 * as a report run beside the command that writes; the busy timeout makes a briefly locked database wait
 * instead of failing.
 */
export function openRunDatabase(
  path: string,
  migrations: readonly string[] = runDatabaseMigrations,
): RunDatabase {
  const database = new Database(path);
  try {
    database.pragma(`busy_timeout = ${busyTimeoutMilliseconds}`);
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = FULL');
    database.pragma('foreign_keys = ON');
    migrateRunDatabase(database, migrations, path);
    return database;
  } catch (error) {
    database.close();
    if (isNotADatabase(error)) {
      throw new UserError(
        `${path} is corrupt: it is not a SQLite database (${errorMessage(error)}). Restore it from a backup, ` +
          'or delete it to redo every step of this run.',
        { cause: error },
      );
    }
    throw error;
  }
}

export function schemaVersionOf(database: RunDatabase): number {
  const version: unknown = database.pragma('user_version', { simple: true });
  if (typeof version !== 'number') throw new Error(`PRAGMA user_version returned ${String(version)}`);
  return version;
}

function migrateRunDatabase(database: RunDatabase, migrations: readonly string[], path: string): void {
  if (schemaVersionOf(database) === migrations.length) return;
  // Immediate: the version is read under the write lock, so two processes opening a fresh database
  // cannot both apply the same script. user_version lives in the database header and is part of the
  // transaction, so a crash mid-migration leaves the previous version intact.
  const migrate = database.transaction(() => {
    const current = schemaVersionOf(database);
    if (current > migrations.length) {
      throw new UserError(
        `${path} was written by a newer mass: database schema version ${current}, this version reads up to ` +
          `${migrations.length}; upgrade mass.`,
      );
    }
    for (const script of migrations.slice(current)) database.exec(script);
    database.pragma(`user_version = ${migrations.length}`);
  });
  migrate.immediate();
}

function isNotADatabase(error: unknown): boolean {
  return error instanceof Database.SqliteError && error.code === 'SQLITE_NOTADB';
}
