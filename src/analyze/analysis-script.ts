import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { SystemError, UserError } from '../errors.js';
import { runPython } from '../tasks/python.js';

/** The bundled script. Two folders up is the package root, from `src/analyze/` and from `dist/analyze/` alike. */
export const WORKFLOW_INFORMATION_SCRIPT = fileURLToPath(
  new URL('../../src/analyze/python/workflow_information.py', import.meta.url),
);

/** How long one call of the script may run: the estimate of a generation of 12 tasks takes well under a minute. */
const TIMEOUT_MS = 15 * 60_000;

/**
 * Runs one mode of the analysis script with `input` (written to a temporary JSON file) and returns its JSON output.
 * The script's own refusal (exit 3: too few tasks, no words) is a `UserError` with its message; any other failure a
 * `SystemError` with the end of its standard error.
 */
export async function runAnalysisScript(mode: 'embed-offline' | 'analyze', input: unknown): Promise<unknown> {
  const folder = await mkdtemp(join(tmpdir(), 'mass-analyze-'));
  try {
    const file = join(folder, 'input.json');
    await writeFile(file, JSON.stringify(input));
    const run = await runPython([WORKFLOW_INFORMATION_SCRIPT, mode, file], {
      cwd: folder,
      timeoutMs: TIMEOUT_MS,
    });
    const stderr = run.stderr.trim().split('\n').slice(-6).join('\n');
    if (run.exitCode === 3) throw new UserError(stderr);
    if (run.exitCode !== 0) {
      throw new SystemError(
        `the workflow analysis script (${mode}) ${run.timedOut ? 'ran out of time' : `failed (exit ${run.exitCode ?? run.signal})`}: ${stderr || 'no output'}. ` +
          'It needs Python 3 with numpy and scikit-learn (scripts/install.sh installs them; MASS_PYTHON names another Python).',
      );
    }
    return JSON.parse(run.stdout) as unknown;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
