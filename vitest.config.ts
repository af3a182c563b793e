import { availableParallelism } from 'node:os';

import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Two tiers. The unit tier (`npm test`) starts no process: no harness, no sandbox, no Python, no Redis, no browser,
 * no `mass` CLI; its setup file makes node:child_process throw, so a test that needs one fails with the rule. The
 * end-to-end tier (`npm run test:e2e`), the files named `*.e2e.test.ts`, runs all of those against the compiled
 * dist/, which its global setup builds first. `npm run check` runs both.
 */
const E2E = 'test/**/*.e2e.test.ts';

/**
 * The end-to-end files run for minutes each, one test after another: started last, one of them alone decides when the
 * suite ends. Vitest orders files by their last durations when it has them (a developer's machine) and by size
 * otherwise (a fresh CI checkout); these go first either way.
 */
const LONGEST_FIRST = [
  // The trainer's torch tests in one Python: six training launches of a tiny model, one and two processes, and the
  // memory planner's layer measurements: about 3.5 minutes of processor time.
  'test/train/python-training.e2e.test.ts',
  // Every research task's careful, careless and trap reference solutions graded, and reruns of their entry points:
  // about 6 minutes.
  'test/tasks/grading.e2e.test.ts',
  'test/cli/rsi.e2e.test.ts',
  'test/cli/search.e2e.test.ts',
  'test/search/search.e2e.test.ts',
  'test/evaluate/evaluation.e2e.test.ts',
  'test/search/fault-tolerance.e2e.test.ts',
  'test/queue/queue-search.e2e.test.ts',
  // A search from a free-text v0 and one of an imported official suite with its evaluation, on the toy model.
  'test/search/free-text-v0.e2e.test.ts',
  'test/tasks/official-suite.e2e.test.ts',
  // Issue 23's analyses on the toy model: an ablation search beside the shared demo search's coverage evaluation with
  // mass compare; a workflow transfer in both judge-order protocols; a search with reruns of its champions.
  'test/compare/compare.e2e.test.ts',
  'test/evaluate/transfer.e2e.test.ts',
  'test/search/repeats.e2e.test.ts',
  // The shared demo search's workflow analysis (and two on synthetic embeddings).
  'test/analyze/workflow-information.e2e.test.ts',
  // mass rsi on one demo task with single-agent collection, then three students trained and evaluated: about 2 minutes.
  'test/students/students.e2e.test.ts',
  // The bundled Harbor dataset under oracle (killed once) and nop, a scripted team, broken verifiers: about a minute.
  'test/benchmark/benchmark.e2e.test.ts',
  // Trains two tiny models with torch on CPU: about 30 s of processor time, minutes under the suite's load.
  'test/train/python-torch.e2e.test.ts',
  // A tiny Qwen3 exported to FP8, deployed by restart and checked: about a minute.
  'test/hosting/fp8-deployment.e2e.test.ts',
];

class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((path) => file.moduleId.endsWith(path));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The end-to-end files wait on child processes (Python graders, the harness, servers): one file more than cores
    // (3 on the 2 cores CI has), so that a machine with more cores runs more at once.
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, E2E],
          setupFiles: ['test/support/unit-tier.ts'],
          // A worker runs file after file in one module graph: each file imported the same modules (the tokenizers,
          // the run store, zod schemas) afresh, which cost more than its tests. A file that changes global state
          // (process.env, timers, spies) puts it back in its afterEach/afterAll.
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: [E2E],
          globalSetup: ['test/support/build-dist.ts', 'test/support/shared-runs-setup.ts'],
        },
      },
    ],
  },
});
