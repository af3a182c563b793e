import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

/**
 * The end-to-end files run for minutes each, one test after another: started last, one of them alone decides when the
 * suite ends. Vitest orders files by their last durations when it has them (a developer's machine) and by size
 * otherwise (a fresh CI checkout); these go first either way.
 */
const LONGEST_FIRST = [
  'test/cli/rsi.test.ts',
  'test/cli/search.test.ts',
  'test/tasks/grading.test.ts',
  'test/search/search-e2e.test.ts',
  'test/evaluate/evaluation-e2e.test.ts',
  'test/search/fault-tolerance-e2e.test.ts',
  'test/queue/queue-search-e2e.test.ts',
  // Trains two tiny models with torch on CPU: about 30 s of processor time, minutes under the suite's load.
  'test/train/python-torch.test.ts',
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
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Most test files wait on child processes (Python graders, the harness, servers): more files than cores at once.
    maxWorkers: 3,
    sequence: { sequencer: LongestFirstSequencer },
  },
});
