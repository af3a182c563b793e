import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { defaultTrainerPython } from '../../src/train/trainer-python.js';
import { trainerLibrariesMissing } from './support.js';

const python = defaultTrainerPython();
/** Each file's time: test_training_runs.py alone takes about 5 minutes idle, twice that under the e2e tier's load. */
const FILE_TIMEOUT_MS = 1_200_000;
const tests = fileURLToPath(new URL('./python', import.meta.url));
const missing = trainerLibrariesMissing(python);
if (missing !== undefined) {
  console.warn(
    `python-training.e2e.test.ts skipped: ${missing}; run \`bash scripts/install-trainer.sh\` (or set MASS_TRAINER_PYTHON)`,
  );
}

/**
 * Runs one of the trainer's Python test files with the trainer's venv; resolves with its exit status and output. It
 * is killed, with the trainers it started (their own process group), shortly before the test's own time runs out, so
 * that a run too slow for the suite's load leaves no trainer behind.
 */
function unittest(pattern: string): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-m', 'unittest', 'discover', '-s', tests, '-p', pattern, '-v'], {
      detached: true,
      env: {
        ...process.env,
        PYTHONDONTWRITEBYTECODE: '1',
        HF_HUB_OFFLINE: '1',
        TOKENIZERS_PARALLELISM: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const deadline = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), FILE_TIMEOUT_MS - 10_000);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(deadline);
      resolve({ status, output });
    });
  });
}

/**
 * The trainer's torch tests (test/train/python/test_*.py), real torch on CPU with tiny random models: the chunked
 * loss against the unchunked one; 2 DDP and 2 FSDP2 processes against 1; a run SIGKILLed and resumed; a warm start;
 * the memory planner; the FP8 export.
 */
describe.skipIf(missing !== undefined)('the python trainer, with torch on CPU', () => {
  it.each(['test_chunked_loss.py', 'test_training_runs.py', 'test_memory_plan.py', 'test_export_fp8.py'])(
    '%s passes',
    async (file) => {
      const { status, output } = await unittest(file);
      expect(status, output.slice(-6000)).toBe(0);
      expect(output).toMatch(/Ran [1-9]\d* tests?/);
      expect(output).not.toMatch(/skipped/);
      // The measured memory of the loss step, for the log.
      const memory = output.match(/loss step peak MiB.*/);
      if (memory) console.info(`${file}: ${memory[0]}`);
    },
    FILE_TIMEOUT_MS,
  );
});
