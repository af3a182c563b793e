import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { CollectionRecord } from '../../src/records/generation-records.js';
import type { StudentsRecord } from '../../src/records/students-record.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';

const directory = temporaryDirectory('mass-students-e2e-');
afterAll(() => directory.remove());

/**
 * The smallest students experiment on the toy model: one demo task, no search iteration (v0 beats the reference),
 * two team and two single-agent runs, both of each selected; then students of one and two episodes, each judged
 * against the base once.
 */
const config = `
name: students
suite: ${DEMO_SUITE}
tasks: [demo-potency]
model: { kind: toy }
roles: { executor: { model: mass-toy } }
budgets: { episodeTimeoutSeconds: 120 }
concurrency: { episodes: 2, judgments: 4, tasks: 1 }
search: { iterations: 0 }
distill: { runs: 3, needed: 3, maxTopUps: 0, schedule: round-robin, train: 2, validation: 1, singleAgentCollection: true }
rsi: { servedAs: 'mass-toy-{generation}' }
evaluation:
  judges: [{ model: mass-toy-judge, name: toy-judge }]
  judgeSeeds: 1
  concurrency: { episodes: 3, judgments: 4 }
`;

describe('mass students on the toy model', () => {
  const runs = join(directory.path, 'runs');
  const run = join(runs, 'students');
  const file = join(directory.path, 'students.yaml');
  const students = [
    'students',
    run,
    '--students',
    'S1,M2,X2',
    '--batch-size',
    '2',
    '--rollouts',
    '1',
    '--json',
  ];
  let record: StudentsRecord;

  it('collects each champion task single-agent beside the team, ranked and selected the same way', async () => {
    writeFileSync(file, config);
    const rsi = await runMass(['rsi', '--config', file, '--rounds', '1', '--runs', runs]);
    expect(rsi.stderr).not.toContain('Error');
    expect(rsi.code).toBe(0);
    const single = await CollectionRecord.read(
      join(run, 'distill/L0/demo-potency/single-agent/collection.json'),
    );
    expect(single).toMatchObject({ condition: 'single-agent', workflowHash: null });
    expect(single.episodes.map((episode) => episode.episodeId)).toEqual(
      [0, 1, 2].map((index) => `L0-single-agent-distill-demo-potency-${index}`),
    );
    for (const episode of single.episodes) {
      const recorded = JSON.parse(readFileSync(join(run, episode.dir, 'episode.json'), 'utf8')) as {
        delegations: number;
        teacher: boolean;
        workflowHash: string | null;
      };
      expect(recorded).toMatchObject({ delegations: 0, teacher: false, workflowHash: null });
    }
    const team = await CollectionRecord.read(join(run, 'distill/L0/demo-potency/collection.json'));
    expect(team.condition).toBeUndefined();
    expect(team.workflowHash).not.toBeNull();
    const selection = JSON.parse(
      readFileSync(join(run, 'distill/L0/demo-potency/single-agent/selection.json'), 'utf8'),
    ) as { train: string[]; validation: string[] };
    expect(selection.train).toHaveLength(2);
    expect(selection.validation).toHaveLength(1);
    // The loop's own training data stays the team's.
    const dataset = JSON.parse(readFileSync(join(run, 'distill/L0/dataset/episodes.json'), 'utf8')) as {
      episodes: Array<{ episodeId: string }>;
    };
    expect(dataset.episodes.every((episode) => episode.episodeId.startsWith('L0-distill-'))).toBe(true);
  }, 300_000);

  it('trains S, M and X students with the toy trainer, counts their tokens as the sampler does, and judges each against the base', async () => {
    const result = await runMass(students);
    expect(result.stderr).not.toContain('Error');
    expect(result.code).toBe(0);
    record = JSON.parse(result.stdout) as StudentsRecord;
    expect(record).toMatchObject({ generation: 'L0', base: 'L0', trainer: 'toy', standIn: 'toy' });
    expect(
      record.students.map((student) => [student.name, student.teamEpisodes, student.singleEpisodes]),
    ).toEqual([
      ['S1', 0, 1],
      ['M2', 2, 0],
      ['X2', 1, 1],
    ]);
    for (const student of record.students) {
      // The tokens are the sampler's: mass data sample over the student's own windows, steps and seed says the same.
      const sample = await runMass([
        'data',
        'sample',
        '--data',
        join(run, 'students/default', student.name, 'dataset'),
        '--steps',
        String(student.tokens.steps),
        '--batch-size',
        '2',
        '--seed',
        '0',
        '--json',
      ]);
      expect(sample.code).toBe(0);
      const sampled = JSON.parse(sample.stdout) as {
        processedSupervisedTokens: number;
        storedSupervisedTokens: number;
      };
      expect(student.tokens.processedSupervisedTokens).toBe(sampled.processedSupervisedTokens);
      expect(student.tokens.storedSupervisedTokens).toBe(sampled.storedSupervisedTokens);
      expect(student.tokens.processedSupervisedTokens).toBeGreaterThan(0);
      // Its checkpoint is chosen on the round's validation selections of its kind(s), the same for every size.
      const validationOf = (folder: string) =>
        (
          JSON.parse(
            readFileSync(join(run, 'distill/L0/demo-potency', folder, 'selection.json'), 'utf8'),
          ) as {
            validation: string[];
          }
        ).validation;
      expect(student.validationEpisodeIds).toEqual([
        ...(student.kind === 'S' ? [] : validationOf('.')),
        ...(student.kind === 'M' ? [] : validationOf('single-agent')),
      ]);
      const windows = readFileSync(
        join(run, 'students/default', student.name, 'dataset/validation.windows.jsonl'),
        'utf8',
      )
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { episode: string }).episode);
      expect([...new Set(windows)].sort()).toEqual([...student.validationEpisodeIds].sort());
      // One task, one rollout: one episode pair against the base, judged by the toy judge.
      expect(student.pairs).toBe(1);
      expect(student.judge).toBe('toy-judge');
      expect(student.winRateWithTies).not.toBeNull();
      expect(student.winRateWithTiesInterval).not.toBeNull();
    }
    // Before the students: the team's collection runs judged against the single agent's of the same task and seed.
    const judged = record.teamVersusSingle!;
    expect(judged).toMatchObject({ generation: 'L0', judges: ['toy-judge'], judgeSeeds: 1, orders: 'both' });
    expect(judged.pairs.map((pair) => [pair.team, pair.single, pair.seed])).toEqual(
      [0, 1, 2].map((index) => [
        `L0-distill-demo-potency-${index}`,
        `L0-single-agent-distill-demo-potency-${index}`,
        index,
      ]),
    );
    const rows = readFileSync(join(run, 'students/default/team-vs-single/judgments.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as { candidateEpisode: string; baselineEpisode: string; replicate: number },
      );
    // One judge, one seed, both orders.
    expect(rows).toHaveLength(2 * judged.pairs.length);
    for (const pair of judged.pairs) {
      expect(
        rows.filter((row) => row.candidateEpisode === pair.team && row.baselineEpisode === pair.single),
      ).toHaveLength(2);
      const output = (episode: string) =>
        (
          JSON.parse(readFileSync(join(run, 'episodes', episode, 'episode.json'), 'utf8')) as {
            usage: { total: { completionTokens: number } };
          }
        ).usage.total.completionTokens;
      expect([pair.teamOutputTokens, pair.singleOutputTokens]).toEqual([
        output(pair.team),
        output(pair.single),
      ]);
      const [small, large] = [pair.teamOutputTokens, pair.singleOutputTokens].sort((a, b) => a - b);
      expect(pair.lengthMatched).toBe(large! <= 1.25 * small!);
    }
    const pooled = judged.overall[0]!.pooled;
    expect(pooled.pairs).toBe(3);
    expect(pooled.judgments.count).toBe(rows.length - judged.failedJudgments);
    expect(judged.lengthMatched[0]!.pooled.pairs).toBe(
      judged.pairs.filter((pair) => pair.lengthMatched).length,
    );

    // The single-agent student learned from trajectories without a delegation; the team student from delegating ones.
    const weights = (name: string) =>
      JSON.parse(readFileSync(join(run, 'students/default/train', name, 'toy-weights.json'), 'utf8')) as {
        delegateBare: number;
      };
    const base = JSON.parse(readFileSync(join(run, 'train/L1/toy-weights.json'), 'utf8')) as {
      delegateBare: number;
    };
    expect(weights('S1').delegateBare).toBeLessThan(weights('M2').delegateBare);
    expect(weights('M2').delegateBare).toBe(base.delegateBare);
  }, 300_000);

  it('resumes without running anything again (the run named by its configuration), and the report draws the students against their tokens', async () => {
    const episodes = readdirSync(join(run, 'students/default/evaluation/students/episodes'));
    // The same experiment named by the run's configuration instead of its directory.
    const again = await runMass(['students', '--config', file, '--runs', runs, ...students.slice(2)]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual(record);
    expect(readdirSync(join(run, 'students/default/evaluation/students/episodes'))).toEqual(episodes);
    // Nothing judged twice.
    expect(
      readFileSync(join(run, 'students/default/team-vs-single/judgments.jsonl'), 'utf8').trim().split('\n'),
    ).toHaveLength(2 * record.teamVersusSingle!.pairs.length);

    const report = await runMass(['report', run]);
    expect(report.code).toBe(0);
    const page = readFileSync(join(run, 'report.html'), 'utf8');
    const section = page.slice(page.indexOf('<section id="students">'));
    expect(section).toContain('Win rate against the base over processed supervised tokens');
    expect(section).toContain('The team’s outputs against the single agent’s');
    expect(section).toContain('How often the judges prefer the team');
    expect(section).toMatch(/<svg/);
    expect(section).toContain('say nothing about a real model');
    for (const student of record.students) expect(section).toContain(`<td>${student.name}</td>`);
  }, 120_000);
});
