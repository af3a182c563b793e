import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Most test files wait on child processes (Python graders, the harness, servers): more files than cores at once.
    maxWorkers: 3,
  },
});
