import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadSuite } from '../src/tasks/load-suite.js';
import { materializeWorkspace } from '../src/tasks/materialize.js';

/** How long each task of the built-in suite takes to materialise a workspace (generator included), one at a time. */
export async function benchGenerators(): Promise<Record<string, unknown>> {
  const suite = await loadSuite(fileURLToPath(new URL('../suites/research-12', import.meta.url)));
  const directory = mkdtempSync(join(tmpdir(), 'mass-bench-generators-'));
  const seconds: Record<string, number> = {};
  try {
    for (const task of suite.tasks) {
      const started = performance.now();
      await materializeWorkspace(task, { seed: 11, workspaceDir: join(directory, task.manifest.id) });
      seconds[task.manifest.id] = Number(((performance.now() - started) / 1000).toFixed(2));
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
  return { secondsPerWorkspace: seconds, slowest: Math.max(...Object.values(seconds)) };
}
