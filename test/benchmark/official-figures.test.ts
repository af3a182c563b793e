import { describe, expect, it } from 'vitest';

import { BenchmarkSummaryRecord, type VerifiedTrial } from '../../src/records/benchmark-records.js';
import { describeBenchmark } from '../../src/benchmark/describe-benchmark.js';
import {
  infrastructureLoss,
  officialFigures,
  officialText,
  sampleStandardDeviation,
} from '../../src/records/benchmark-official-figures.js';
import { verifiedTrial } from './verified-trial.js';

function trial(
  label: string,
  task: string,
  index: number,
  reward: number,
  lost: Partial<Pick<VerifiedTrial, 'status' | 'failure' | 'outputTokens'>> = {},
): VerifiedTrial {
  return verifiedTrial(label, task, index, reward, lost);
}

const ENGINE_ERROR = {
  status: 'failed',
  failure: "the trial's container could not be started: docker: Error response from daemon",
};

// Two generations, three tasks, three runs; L1 lost task c's run 1 to the engine, so c is compared for nobody.
const REWARDS: Record<string, Record<string, number[]>> = {
  L0: { a: [1, 0, 1], b: [0, 0, 1], c: [1, 1, 1] },
  L1: { a: [1, 1, 1], b: [1, 0, 0], c: [0, 0, 0] },
};
const trials = Object.entries(REWARDS).flatMap(([label, tasks]) =>
  Object.entries(tasks).flatMap(([task, rewards]) =>
    rewards.map((reward, index) =>
      trial(label, task, index, reward, label === 'L1' && task === 'c' && index === 1 ? ENGINE_ERROR : {}),
    ),
  ),
);

describe('the official statistic', () => {
  it('mean ± sample SD over runs, on the tasks every label has a result for in every run', () => {
    const official = officialFigures(trials);
    expect(official.tasks).toEqual(['a', 'b']);
    expect(official.incompleteTasks).toEqual(['c']);
    const [l0, l1] = official.figures;
    // L0's runs over a and b: (1+0)/2, (0+0)/2, (1+1)/2.
    expect(l0).toMatchObject({ label: 'L0', runMeans: [0.5, 0, 1], lostToInfrastructure: 0 });
    expect(l0!.mean).toBeCloseTo(0.5, 12);
    // Sample SD of 0.5, 0, 1: sqrt(((0)^2 + 0.5^2 + 0.5^2) / 2) = 0.5.
    expect(l0!.sampleSd).toBeCloseTo(0.5, 12);
    expect(l1).toMatchObject({ label: 'L1', runMeans: [1, 0.5, 0.5], lostToInfrastructure: 1 });
    expect(l1!.mean).toBeCloseTo(2 / 3, 12);
    expect(l1!.sampleSd).toBeCloseTo(Math.sqrt(((1 / 3) ** 2 + 2 * (1 / 6) ** 2) / 2), 12);
    expect(officialText(l0!)).toBe('0.500 ± 0.500');
  });

  it('one run has a mean and no SD; no compared task has neither', () => {
    expect(sampleStandardDeviation([0.4])).toBeNull();
    const single = officialFigures(trials.filter((entry) => entry.trial === 0));
    // Run 0 alone: task c has a result for both labels there, so it is compared.
    expect(single.tasks).toEqual(['a', 'b', 'c']);
    expect(single.figures[0]).toMatchObject({ sampleSd: null });
    expect(single.figures[0]!.mean).toBeCloseTo(2 / 3, 12);
    expect(officialText(single.figures[0]!)).toBe('0.667');
    const none = officialFigures(trials.filter((entry) => entry.task === 'c'));
    expect(none.tasks).toEqual([]);
    expect(none.figures[0]).toMatchObject({ runMeans: [], mean: null, sampleSd: null });
  });

  it('what infrastructure lost: an engine error, a harness crash before any model call, a verifier never run', () => {
    expect(infrastructureLoss(trial('L0', 'a', 0, 0, ENGINE_ERROR))).toBe(ENGINE_ERROR.failure);
    expect(infrastructureLoss(trial('L0', 'a', 0, 0, { status: 'harness_crash', outputTokens: 0 }))).toBe(
      'the harness crashed before its first model call',
    );
    // A harness that crashed after the model answered is the agent's trial, scored as it ended.
    expect(
      infrastructureLoss(trial('L0', 'a', 0, 0, { status: 'harness_crash', outputTokens: 40 })),
    ).toBeNull();
    const neverVerified = trial('L0', 'a', 0, 0);
    neverVerified.verification = {
      ...neverVerified.verification,
      status: 'crashed',
      reward: null,
      exitCode: null,
      detail: 'test.sh could not be run: docker exec failed',
    };
    expect(infrastructureLoss(neverVerified)).toBe(
      'the verifier never ran test.sh to its end: test.sh could not be run: docker exec failed',
    );
    // A verifier the agent's code killed is the agent's doing: it counts (unscored, 0).
    const killed = trial('L0', 'a', 0, 0);
    killed.verification = { ...killed.verification, status: 'crashed', reward: null, exitCode: 137 };
    expect(infrastructureLoss(killed)).toBeNull();
    expect(infrastructureLoss({ ...trial('L0', 'a', 0, 1), lostToInfrastructure: 'image pull failed' })).toBe(
      'image pull failed',
    );
  });

  it('a summary of version 1 still reads, its official figures computed from its trials, and is printed', () => {
    const summary = BenchmarkSummaryRecord.parse(
      {
        schemaVersion: 1,
        kind: 'benchmark-summary',
        benchmark: 'b',
        sources: ['/datasets/b'],
        agent: 'team',
        trialsPerTask: 3,
        reference: 'L0',
        standIn: null,
        tasks: ['a', 'b', 'c'],
        skipped: [],
        figures: [],
        perTask: [],
        trials,
        bootstrap: { seed: 1, resamples: 10 },
      },
      'summary-team.json',
    );
    expect(summary.official.tasks).toEqual(['a', 'b']);
    expect(summary.official.figures.map((figure) => officialText(figure))).toEqual([
      '0.500 ± 0.500',
      '0.667 ± 0.289',
    ]);
    const text = describeBenchmark(summary);
    expect(text).toContain('mean ± sample SD over runs');
    expect(text).toMatch(/L1\s+0\.667 ± 0\.289\s+3\s+1/);
    expect(text).toContain('left out, without a result for every label in every run: c');
  });

  it('prints what went wrong in a trial: a failed solve.sh, a verifier whose set-up failed or whose zero says why', () => {
    const offline = trial('oracle', 'uv-task', 0, 0);
    offline.verification.detail =
      'its output says "/tests/test.sh: line 6: curl: command not found": its set-up may have failed';
    const failing = trial('oracle', 'broken', 0, 0, {
      status: 'failed',
      failure: 'solve.sh exited with 2; its last lines:\nmake: *** [all] Error 2',
    });
    const summary = BenchmarkSummaryRecord.parse(
      {
        schemaVersion: 1,
        kind: 'benchmark-summary',
        benchmark: 'b',
        sources: ['/datasets/b'],
        agent: 'oracle',
        trialsPerTask: 1,
        reference: null,
        standIn: null,
        tasks: ['uv-task', 'broken', 'a'],
        skipped: [],
        figures: [],
        perTask: [],
        trials: [offline, failing, trial('oracle', 'a', 0, 1)],
        bootstrap: { seed: 1, resamples: 10 },
      },
      'summary-oracle.json',
    );
    const text = describeBenchmark(summary);
    expect(text).toContain("Trials to look at (each trial's record keeps its verifier's output):");
    expect(text).toContain(
      '  uv-task oracle trial 0: the verifier (scored): its output says "/tests/test.sh: line 6: curl: command not found": its set-up may have failed',
    );
    expect(text).toContain(
      '  broken oracle trial 0: the agent: solve.sh exited with 2; its last lines: | make: *** [all] Error 2',
    );
    expect(text).not.toMatch(/ a oracle trial 0/);
  });
});
