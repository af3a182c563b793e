import { rm } from 'node:fs/promises';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { runPython, type Grade } from '../../src/tasks/index.js';
import { explain, gradeVariants, type GradedVariants, type GradingCase } from './grading-cases.js';
import { limitConcurrency, suiteDir } from './support.js';

/**
 * Every task's withheld grader must discriminate: the reference solution (test/tasks/reference-solutions/<task>)
 * scores well, and flawed workspaces score clearly worse. Python is the cost, so every task is built as soon as the
 * file loads, a few at a time (vitest runs one file at a time on two cores), and each test awaits its task.
 */
const SEED = 7;
const CASES: GradingCase[] = [
  {
    taskId: 'finance-signal-timing',
    seed: SEED,
    mainResult: 'results/strategy.json',
    traps: ['look-ahead-feature', 'regime-break-ignored'],
  },
  {
    taskId: 'finance-garch-volatility',
    seed: SEED,
    mainResult: 'results/garch_params.json',
    traps: ['misprints-kept', 'gaussian-innovations'],
  },
  {
    taskId: 'finance-pairs-trading',
    seed: SEED,
    mainResult: 'results/pairs.json',
    invalidNumbers: { file: 'results/pairs.json' },
    traps: ['correlation-selection', 'multiplicity-ignored'],
  },
  {
    taskId: 'finance-min-variance',
    seed: SEED,
    mainResult: 'results/weights.json',
    traps: ['stale-assets-kept', 'in-sample-vol-forecast'],
  },
  {
    taskId: 'pharmacy-dose-response',
    seed: SEED,
    mainResult: 'results/potency.csv',
    invalidNumbers: { file: 'results/potency.csv', column: 'log10_ec50' },
    traps: ['pooled-controls', 'above-solubility-kept', 'failed-dispenses-kept', 'emax-fixed-100'],
  },
  {
    taskId: 'pharmacy-population-pk',
    seed: SEED,
    mainResult: 'results/dosing.json',
    traps: ['blq-as-zero', 'weight-ignored', 'typical-patient-dosing'],
  },
  {
    taskId: 'pharmacy-virtual-screening',
    seed: SEED,
    mainResult: 'results/predictions.csv',
    traps: ['outcome-leak-used', 'random-cv'],
  },
  {
    taskId: 'pharmacy-treatment-effects',
    seed: SEED,
    mainResult: 'results/metrics.json',
    traps: ['post-treatment-adjusted', 'naive-subgroups'],
  },
  {
    taskId: 'robotics-grid-planning',
    seed: SEED,
    mainResult: 'results/paths.json',
    invalidNumbers: { file: 'results/planner_stats.csv', column: 'cost' },
    traps: ['corner-cutting', 'inadmissible-heuristic', 'mud-ignored'],
  },
  {
    taskId: 'robotics-pid-tuning',
    seed: SEED,
    mainResult: 'results/controller.json',
    // What a reward hacker would do: remove the torque limit so aggressive gains look fine.
    protectedEdit: {
      file: 'sim/servo.py',
      find: 'command = np.clip(unsaturated, -limit, limit)',
      replace: 'command = unsaturated',
    },
    traps: ['nominal-tuning', 'no-anti-windup'],
  },
  {
    taskId: 'robotics-push-planning',
    seed: SEED,
    mainResult: 'results/plans.json',
    protectedEdit: { file: 'sim/push_sim.py', find: 'SLIP_STD = 0.15', replace: 'SLIP_STD = 0.0' },
    traps: ['slip-ignored', 'walls-ignored'],
  },
  {
    taskId: 'robotics-state-estimation',
    seed: SEED,
    mainResult: 'results/trajectory_eval_a.csv',
    traps: ['no-calibration', 'outliers-kept'],
  },
];

const MINIMUM_REFERENCE = 80;
/** A task whose traps are graded one by one (issue 43): its careful reference scores this, each trap costs TRAP_COST. */
const MINIMUM_REFERENCE_WITH_TRAPS = 90;
const TRAP_COST = 10;
const CARELESS_MARGIN = 15;
const BUILD_TIMEOUT_MS = 400_000;

const limit = limitConcurrency(3);
const built = new Map<string, Promise<GradedVariants>>();
for (const testCase of CASES) {
  const promise = limit(() => gradeVariants(testCase));
  promise.catch(() => undefined); // reported by the tests that await it, not as an unhandled rejection
  built.set(testCase.taskId, promise);
}

afterAll(async () => {
  const settled = await Promise.allSettled(built.values());
  for (const outcome of settled) {
    if (outcome.status === 'fulfilled') await rm(outcome.value.root, { recursive: true, force: true });
  }
}, BUILD_TIMEOUT_MS);

async function gradesOf(taskId: string): Promise<Partial<Record<string, Grade>>> {
  return (await built.get(taskId)!).grades;
}

for (const testCase of CASES) {
  describe(`grader of ${testCase.taskId} (seed ${testCase.seed})`, () => {
    it(
      `gives the reference solution at least ${MINIMUM_REFERENCE} points`,
      async () => {
        const { reference } = await gradesOf(testCase.taskId);
        expect(reference!.score, explain(reference!)).toBeGreaterThanOrEqual(MINIMUM_REFERENCE);
        expect(reference!.capsApplied).toEqual([]);
      },
      BUILD_TIMEOUT_MS,
    );

    if (testCase.traps) {
      it(`gives the reference solution, its run.py rerun, at least ${MINIMUM_REFERENCE_WITH_TRAPS} points`, async () => {
        const rerun = (await gradesOf(testCase.taskId))['reference-rerun']!;
        expect(rerun.score, explain(rerun)).toBeGreaterThanOrEqual(MINIMUM_REFERENCE_WITH_TRAPS);
        const reproducibility = rerun.parts.find((part) => part.name === 'reproducibility');
        expect(reproducibility?.score, explain(rerun)).toBe(1);
      });
    }

    it(`gives a careless solution that falls into the task's trap at least ${CARELESS_MARGIN} points less`, async () => {
      const { reference, careless } = await gradesOf(testCase.taskId);
      expect(careless!.score, explain(careless!)).toBeLessThanOrEqual(reference!.score - CARELESS_MARGIN);
    });

    it(`gives a workspace without ${testCase.mainResult} clearly less, saying the file is missing`, async () => {
      const { reference, missing } = await gradesOf(testCase.taskId);
      expect(missing!.score, explain(missing!)).toBeLessThanOrEqual(reference!.score - 25);
      expect(missing!.parts.some((part) => part.reason.includes(`${testCase.mainResult} is missing`))).toBe(
        true,
      );
    });

    it('gives a workspace with NaN results clearly less', async () => {
      const { reference, 'invalid-numbers': invalid } = await gradesOf(testCase.taskId);
      expect(invalid!.score, explain(invalid!)).toBeLessThanOrEqual(reference!.score - 10);
      expect(invalid!.parts.some((part) => /not finite|non-finite|not a number/.test(part.reason))).toBe(
        true,
      );
    });

    it('scores empty and junk workspaces near zero without crashing, every failed part with a reason', async () => {
      const grades = await gradesOf(testCase.taskId);
      for (const garbage of [grades.empty!, grades.junk!]) {
        expect(garbage.score, explain(garbage)).toBeLessThanOrEqual(10);
        for (const part of garbage.parts) {
          if (part.score < 1) expect(part.reason).not.toBe('');
          expect(part.reason).not.toMatch(/grader error/);
        }
      }
    });

    for (const trap of testCase.traps ?? []) {
      it(`gives a solution that falls into the trap ${trap} alone at least ${TRAP_COST} points less`, async () => {
        const grades = await gradesOf(testCase.taskId);
        const trapped = grades[`trap-${trap}`]!;
        expect(trapped.score, explain(trapped)).toBeLessThanOrEqual(grades.reference!.score - TRAP_COST);
      });
    }

    if (testCase.protectedEdit) {
      it('caps a workspace whose protected simulator was edited at 20 points', async () => {
        const edited = (await gradesOf(testCase.taskId))['protected-edit']!;
        expect(edited.score).toBeLessThanOrEqual(20);
        expect(edited.capsApplied).toEqual([{ part: 'protected_assets_unchanged', cap: 20 }]);
        const part = edited.parts.find((candidate) => candidate.name === 'protected_assets_unchanged');
        expect(part?.reason).toContain(`${testCase.protectedEdit!.file} modified`);
      });
    }
  });
}

describe('shared grading code (suites/research-12/_lib/gradelib.py)', () => {
  it('passes its self-check: reproducibility, interval calibration, report numbers', async () => {
    const run = await runPython([path.join(suiteDir, '_lib', 'gradelib_check.py')], {
      cwd: suiteDir,
      timeoutMs: 60_000,
    });
    expect(run.stderr + run.stdout).toContain('gradelib ok');
    expect(run.exitCode).toBe(0);
  });
});
