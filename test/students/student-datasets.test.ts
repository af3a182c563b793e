import { describe, expect, it } from 'vitest';

import { parseRunConfig } from '../../src/config/run-config.js';
import { distillSettings } from '../../src/distill/generation/distill-settings.js';

import {
  interleaveByRank,
  parseStudentSpecs,
  studentDataset,
  type SelectedEpisode,
  type SelectionPools,
} from '../../src/students/student-datasets.js';

function episodes(prefix: string, tasks: string[], ranks: number): SelectedEpisode[] {
  // Listed task by task, worst first, so that the order the students draw in has to be made.
  return tasks.flatMap((task) =>
    Array.from({ length: ranks }, (_, index) => {
      const rank = ranks - index;
      return {
        episodeId: `${prefix}-${task}-${rank}`,
        task,
        dir: `episodes/${prefix}-${task}-${rank}`,
        rank,
      };
    }),
  );
}

const pools: SelectionPools = {
  team: episodes('team', ['beta', 'alpha'], 3),
  single: episodes('single', ['beta', 'alpha'], 2),
  teamValidation: episodes('team-validation', ['beta', 'alpha'], 1),
  singleValidation: episodes('single-validation', ['beta', 'alpha'], 1),
};

const ids = (list: SelectedEpisode[]) => list.map((episode) => episode.episodeId);

describe('student datasets', () => {
  it('parses the students and their sizes, and refuses what is not one', () => {
    expect(parseStudentSpecs('S2, M4,X3')).toEqual([
      { name: 'S2', kind: 'S', episodes: 2 },
      { name: 'M4', kind: 'M', episodes: 4 },
      { name: 'X3', kind: 'X', episodes: 3 },
    ]);
    expect(() => parseStudentSpecs('S0')).toThrow(/S, M or X and its episodes/);
    expect(() => parseStudentSpecs('Y2')).toThrow(/S, M or X/);
    expect(() => parseStudentSpecs('M2,M2')).toThrow(/given twice/);
  });

  it('draws the best ranks first, every task at a rank before the next rank', () => {
    expect(ids(interleaveByRank(pools.team))).toEqual([
      'team-alpha-1',
      'team-beta-1',
      'team-alpha-2',
      'team-beta-2',
      'team-alpha-3',
      'team-beta-3',
    ]);
  });

  it('gives S single-agent episodes only, M team episodes only, X half and half with the odd one from the team', () => {
    const single = studentDataset(pools, { name: 'S3', kind: 'S', episodes: 3 });
    expect(single.team).toEqual([]);
    expect(ids(single.single)).toEqual(['single-alpha-1', 'single-beta-1', 'single-alpha-2']);

    const team = studentDataset(pools, { name: 'M4', kind: 'M', episodes: 4 });
    expect(team.single).toEqual([]);
    expect(ids(team.team)).toEqual(['team-alpha-1', 'team-beta-1', 'team-alpha-2', 'team-beta-2']);

    const mixed = studentDataset(pools, { name: 'X5', kind: 'X', episodes: 5 });
    expect(ids(mixed.team)).toEqual(['team-alpha-1', 'team-beta-1', 'team-alpha-2']);
    expect(ids(mixed.single)).toEqual(['single-alpha-1', 'single-beta-1']);
    // The same pools give the same data whatever order they were read in.
    const reversed = {
      team: [...pools.team].reverse(),
      single: [...pools.single].reverse(),
      teamValidation: [...pools.teamValidation].reverse(),
      singleValidation: [...pools.singleValidation].reverse(),
    };
    expect(studentDataset(reversed, { name: 'X5', kind: 'X', episodes: 5 })).toEqual(mixed);
  });

  it('validates each student on the round’s validation selections of the kinds its data holds', () => {
    const validation = (kind: 'S' | 'M' | 'X', size: number) =>
      ids(studentDataset(pools, { name: `${kind}${size}`, kind, episodes: size }).validation);
    expect(validation('S', 1)).toEqual(['single-validation-alpha-1', 'single-validation-beta-1']);
    expect(validation('M', 1)).toEqual(['team-validation-alpha-1', 'team-validation-beta-1']);
    expect(validation('M', 6)).toEqual(validation('M', 1));
    expect(validation('X', 2)).toEqual([...validation('M', 1), ...validation('S', 1)]);
  });

  it('refuses a student larger than its pool, naming the setting that collects single-agent episodes', () => {
    expect(() => studentDataset(pools, { name: 'M7', kind: 'M', episodes: 7 })).toThrow(
      /needs 7 selected team episodes, and the round selected 6/,
    );
    expect(() => studentDataset({ ...pools, single: [] }, { name: 'X2', kind: 'X', episodes: 2 })).toThrow(
      /distill\.singleAgentCollection: true/,
    );
  });
});

describe('the single-agent collection setting', () => {
  it('is off by default, so the loop collects the team alone, and on when configured', () => {
    const config = (distill: object) =>
      parseRunConfig(
        {
          name: 'n',
          suite: 's',
          roles: { executor: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm' } },
          distill,
        },
        'config.yaml',
      );
    expect(distillSettings(config({})).collection.singleAgent).toBe(false);
    expect(distillSettings(config({ singleAgentCollection: true })).collection.singleAgent).toBe(true);
  });
});
