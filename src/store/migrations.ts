/**
 * The schema of `mass.db`, one SQL script per version: script `i` takes a database from
 * `PRAGMA user_version` i to i + 1. A released script is never edited; a change is a new script appended
 * at the end (tables for episodes, verdicts, rankings, generations arrive this way).
 */
export const runDatabaseMigrations: readonly string[] = [
  `CREATE TABLE steps (
    key TEXT PRIMARY KEY,
    status TEXT NOT NULL CHECK (status IN ('started', 'done', 'failed')),
    attempts INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    duration_ms REAL,
    output_json TEXT,
    error TEXT
  ) STRICT;`,
  // The locations of the output's run-relative paths (see run-relative-paths.ts); null in rows written before it,
  // which are rewritten when the run is next opened.
  `ALTER TABLE steps ADD COLUMN output_paths TEXT;`,
];
