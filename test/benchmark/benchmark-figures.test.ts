import { describe, expect, it } from 'vitest';

import { benchmarkFigures, taskRows } from '../../src/benchmark/benchmark-figures.js';
import type { VerifiedTrial } from '../../src/records/benchmark-records.js';
import { taskEnvironment } from '../../src/benchmark/task-environment.js';
import type { HarborTask } from '../../src/tasks/harbor-task.js';
import { verifiedTrial } from './verified-trial.js';

function trial(
  label: string,
  task: string,
  index: number,
  reward: number | null,
  tokens: number,
): VerifiedTrial {
  return verifiedTrial(label, task, index, reward, {
    outputTokens: tokens,
    delegations: label === 'L1' ? 1 : 0,
  });
}

describe('benchmark figures', () => {
  // Task a has two trials, task b one per label: a task weighs the same however many trials it has.
  const trials = [
    trial('L0', 'a', 0, 1, 1000),
    trial('L0', 'a', 1, 0, 1000),
    trial('L0', 'b', 0, 1, 2000),
    trial('L1', 'a', 0, 1, 500),
    trial('L1', 'a', 1, 1, 500),
    trial('L1', 'b', 0, null, 1000),
  ];
  const figures = benchmarkFigures(trials, { reference: 'L0', seed: 1, resamples: 200 });

  it('means over tasks, reward per 1,000 output tokens as a ratio of totals, the ratio to the reference', () => {
    const [l0, l1] = figures;
    expect(l0).toMatchObject({ label: 'L0', trials: 3, tasks: 2, unscored: 0, ratioToReference: null });
    expect(l0!.meanReward).toBeCloseTo((0.5 + 1) / 2, 12);
    expect(l0!.rewardPerThousandTokens).toBeCloseTo((1000 * 2) / 4000, 12);
    expect(l1).toMatchObject({ label: 'L1', unscored: 1, delegationRate: 1, meanDelegations: 1 });
    // The unscored trial counts 0 in the mean, and its tokens count.
    expect(l1!.meanReward).toBeCloseTo((1 + 0) / 2, 12);
    expect(l1!.rewardPerThousandTokens).toBeCloseTo((1000 * 2) / 2000, 12);
    expect(l1!.ratioToReference!.value).toBeCloseTo(1 / 0.5, 12);
    expect(l1!.meanOutputTokens).toBeCloseTo(2000 / 3, 12);
  });

  it('intervals resample tasks: with two tasks they span the two tasks’ values', () => {
    const interval = figures[0]!.meanRewardInterval!;
    expect(interval.lower).toBeCloseTo(0.5, 12);
    expect(interval.upper).toBeCloseTo(1, 12);
  });

  it('one row per task and label, with how its verifications ended', () => {
    expect(taskRows(trials).map((row) => [row.task, row.label, row.meanReward, row.statuses])).toEqual([
      ['a', 'L0', 0.5, { scored: 2 }],
      ['a', 'L1', 1, { scored: 2 }],
      ['b', 'L0', 1, { scored: 1 }],
      ['b', 'L1', 0, { 'no-reward': 1 }],
    ]);
  });
});

describe('where a Harbor task runs', () => {
  const task = (overrides: Partial<HarborTask>): HarborTask => ({
    dir: '/t',
    name: 't',
    tomlPath: '/t/task.toml',
    instruction: 'x',
    metadata: {},
    agentTimeoutSec: 600,
    verifierTimeoutSec: 600,
    buildTimeoutSec: 600,
    verifierEnv: {},
    solutionEnv: {},
    environmentEnv: {},
    agentUser: null,
    verifierUser: null,
    statePaths: [],
    environmentFiles: [],
    container: { image: null, dockerfile: false, compose: false },
    memoryBytes: null,
    storageBytes: null,
    cpus: null,
    gpus: 0,
    allowInternet: false,
    hasSolution: true,
    ...overrides,
  });

  it('on the host without an image of its own, or with one the host provides', () => {
    expect(taskEnvironment(task({}), [], { kind: 'refuse' }, null)).toEqual({ kind: 'host', network: false });
    const image = task({ container: { image: 'python:3.12', dockerfile: false, compose: false } });
    expect(taskEnvironment(image, ['python:3.12'], { kind: 'refuse' }, null).kind).toBe('host');
  });

  it('a container of its own: skipped with the reason without an engine, else its image built or pulled', () => {
    const built = task({ container: { image: null, dockerfile: true, compose: false } });
    expect(taskEnvironment(built, [], { kind: 'refuse' }, null)).toEqual({
      kind: 'skipped',
      reason: expect.stringContaining(
        'no container engine is configured (--container-engine docker or podman)',
      ),
    });
    expect(taskEnvironment(built, [], { kind: 'refuse' }, 'podman', () => null)).toEqual({
      kind: 'skipped',
      reason: expect.stringContaining('podman is not on PATH'),
    });
    expect(taskEnvironment(built, [], { kind: 'refuse' }, 'podman', () => '/usr/bin/podman')).toEqual({
      kind: 'container',
      engine: '/usr/bin/podman',
      source: {
        dockerfile: '/t/environment/Dockerfile',
        context: '/t/environment',
        tag: expect.stringMatching(/^mass-harbor\/t-[0-9a-f]{12}:local$/),
      },
      network: false,
    });
    const pulled = task({ container: { image: 'ghcr.io/x/y:1', dockerfile: false, compose: false } });
    expect(taskEnvironment(pulled, [], { kind: 'refuse' }, 'docker', () => '/usr/bin/docker')).toMatchObject({
      kind: 'container',
      source: { image: 'ghcr.io/x/y:1' },
    });
    const compose = task({ container: { image: null, dockerfile: false, compose: true } });
    expect(taskEnvironment(compose, [], { kind: 'refuse' }, null).kind).toBe('skipped');
  });

  it('the internet: refused, withheld, or mapped onto the egress allow-list', () => {
    const online = task({ allowInternet: true });
    expect(taskEnvironment(online, [], { kind: 'refuse' }, null)).toMatchObject({ kind: 'skipped' });
    expect(taskEnvironment(online, [], { kind: 'offline' }, null)).toEqual({ kind: 'host', network: false });
    expect(taskEnvironment(online, [], { kind: 'allow', hosts: ['pypi.org'] }, null)).toEqual({
      kind: 'host',
      network: { allow: ['pypi.org'] },
    });
  });
});
