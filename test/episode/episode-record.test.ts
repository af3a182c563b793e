import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { EpisodeRecord } from '../../src/records/episode-record.js';

const versionOne = JSON.parse(
  readFileSync(fileURLToPath(new URL('../fixtures/distill/single/episode.json', import.meta.url)), 'utf8'),
) as Record<string, unknown>;

describe('episode.json seeds', () => {
  it('reads a version 1 record, whose one seed drew both the data and the sampling, with that seed as the data seed', () => {
    expect(versionOne.schemaVersion).toBe(1);
    expect(versionOne).not.toHaveProperty('dataSeed');
    const record = EpisodeRecord.parse(versionOne, 'episode.json');
    expect(record.seed).toBe(versionOne.seed);
    expect(record.dataSeed).toBe(versionOne.seed);
  });

  it('writes both seeds, and refuses a current record without its data seed', () => {
    const record = { ...EpisodeRecord.parse(versionOne, 'episode.json'), seed: 11, dataSeed: 4 };
    const written = JSON.parse(EpisodeRecord.serialize(record)) as Record<string, unknown>;
    expect(written).toMatchObject({ schemaVersion: EpisodeRecord.version, seed: 11, dataSeed: 4 });
    delete written.dataSeed;
    expect(() => EpisodeRecord.parse(written, 'run/episodes/x/episode.json')).toThrow(
      /run\/episodes\/x\/episode\.json is not a valid "episode" record: .*dataSeed/,
    );
  });
});
