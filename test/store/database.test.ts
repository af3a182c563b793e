import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

import { temporaryDirectory } from './__fixtures__/test-run.js';
import { openRunDatabase, schemaVersionOf } from '../../src/store/database.js';
import { runDatabaseMigrations } from '../../src/store/migrations.js';

const createEpisodes = 'CREATE TABLE episodes (id TEXT PRIMARY KEY) STRICT;';
const addEpisodeTask = 'ALTER TABLE episodes ADD COLUMN task TEXT;';

describe('mass.db', () => {
  it('is created with every migration applied, in WAL mode with a busy timeout', () => {
    const database = openRunDatabase(join(temporaryDirectory(), 'mass.db'));

    expect(schemaVersionOf(database)).toBe(runDatabaseMigrations.length);
    expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(database.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
    expect(database.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all()).toContain(
      'steps',
    );
    database.close();
  });

  it('applies only the migrations appended since it was last opened, keeping its data', () => {
    const path = join(temporaryDirectory(), 'mass.db');
    const before = openRunDatabase(path, [createEpisodes]);
    before.prepare("INSERT INTO episodes (id) VALUES ('e1')").run();
    before.close();

    const after = openRunDatabase(path, [createEpisodes, addEpisodeTask]);

    expect(schemaVersionOf(after)).toBe(2);
    expect(after.prepare('SELECT id, task FROM episodes').all()).toEqual([{ id: 'e1', task: null }]);
    after.close();
  });

  it('refuses a database written by a newer mass', () => {
    const path = join(temporaryDirectory(), 'mass.db');
    openRunDatabase(path, [createEpisodes, addEpisodeTask]).close();

    expect(() => openRunDatabase(path, [createEpisodes])).toThrow(
      `${path} was written by a newer mass: database schema version 2, this version reads up to 1; upgrade mass.`,
    );
  });

  it('leaves the previous version intact when a migration fails', () => {
    const path = join(temporaryDirectory(), 'mass.db');
    openRunDatabase(path, [createEpisodes]).close();

    expect(() => openRunDatabase(path, [createEpisodes, `${addEpisodeTask} NOT VALID SQL;`])).toThrow();

    const database = openRunDatabase(path, [createEpisodes]);
    expect(schemaVersionOf(database)).toBe(1);
    database.close();
  });

  it('refuses a file that is not a SQLite database', () => {
    const path = join(temporaryDirectory(), 'mass.db');
    writeFileSync(
      path,
      'this is not a database, just some text that is long enough to have a header'.repeat(20),
    );

    expect(() => openRunDatabase(path)).toThrow(`${path} is corrupt: it is not a SQLite database`);
  });
});
