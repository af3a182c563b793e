import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

import { openRun, type OpenRunOptions, type Run } from '../../../src/store/run-store.js';
import { TestConfig, testConfig } from './test-config.js';

/** A fresh directory removed when the current test finishes. */
export function temporaryDirectory(): string {
  const directory = mkdtempSync(join(tmpdir(), 'mass-store-'));
  onTestFinished(() => rmSync(directory, { recursive: true, force: true }));
  return directory;
}

/** Opens a run with the test configuration; it is closed when the current test finishes. */
export function openTestRun(
  runsDirectory: string,
  options: Partial<OpenRunOptions<typeof TestConfig>> = {},
): Run<TestConfig> {
  const run = openRun({
    runsDirectory,
    name: 'test-run',
    configSchema: TestConfig,
    config: testConfig,
    ...options,
  });
  onTestFinished(() => run.close());
  return run;
}
