// Global setup of the end-to-end tier (vitest.config.ts): a fresh folder for the runs several files share
// (shared-runs.ts), handed to them with `inject('sharedRuns')` and removed when the tier ends.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { TestProject } from 'vitest/node';

export default function sharedRunsFolder(project: TestProject): () => void {
  const folder = mkdtempSync(join(tmpdir(), 'mass-e2e-shared-'));
  project.provide('sharedRuns', folder);
  return () => rmSync(folder, { recursive: true, force: true });
}
