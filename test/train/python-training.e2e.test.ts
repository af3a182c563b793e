import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { beforeAll, describe, expect, it } from 'vitest';

import { defaultTrainerPython } from '../../src/train/trainer-python.js';
import { trainerLibrariesMissing } from './support.js';

const python = defaultTrainerPython();
/**
 * The four files' time together: 3.5 minutes of processor time (test_training_runs.py 2 of them), 22 minutes of wall
 * time measured on 2 cores under a load of 20.
 */
const FILE_TIMEOUT_MS = 1_800_000;
/** The trainer's torch test files, run by one Python: torch, transformers and peft are imported once, not four times. */
const MODULES = ['test_chunked_loss', 'test_training_runs', 'test_memory_plan', 'test_export_fp8'];
const tests = fileURLToPath(new URL('./python', import.meta.url));
const missing = trainerLibrariesMissing(python);
if (missing !== undefined) {
  console.warn(
    `python-training.e2e.test.ts skipped: ${missing}; run \`bash scripts/install-trainer.sh\` (or set MASS_TRAINER_PYTHON)`,
  );
}

/**
 * Runs the trainer's Python test modules with the trainer's venv; resolves with its exit status and output. It
 * is killed, with the trainers it started (their own process group), shortly before the test's own time runs out, so
 * that a run too slow for the suite's load leaves no trainer behind.
 */
function unittest(modules: string[]): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-m', 'unittest', '-v', ...modules], {
      cwd: tests,
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
  let run: { status: number | null; output: string };
  beforeAll(async () => {
    run = await unittest(MODULES);
    // The measured memory of the loss step, for the log.
    const memory = run.output.match(/loss step peak MiB.*/);
    if (memory) console.info(`test_chunked_loss.py: ${memory[0]}`);
  }, FILE_TIMEOUT_MS);

  it.each(MODULES)('%s.py passes', (module) => {
    const failed = new RegExp(`^(FAIL|ERROR): .*\\(${module}\\.`, 'm');
    expect(run.output, run.output.slice(-6000)).not.toMatch(failed);
    expect(run.output).toMatch(new RegExp(`\\(${module}\\.\\w+\\.\\w+\\) \\.\\.\\. `));
  });

  it('runs every test, skipping none', () => {
    expect(run.status, run.output.slice(-6000)).toBe(0);
    expect(run.output).toMatch(/Ran [1-9]\d* tests?/);
    expect(run.output).not.toMatch(/skipped/);
  });
});
