import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { readWindowSummaries } from '../../src/distill/read-window-summaries.js';
import { sampleWindows, type SampleableWindow } from '../../src/distill/window-sampler.js';
import { resolveHyperparameters } from '../../src/train/hyperparameters.js';
import { PYTHON_TRAINER_SCRIPT, pythonTrainer } from '../../src/train/python-trainer.js';
import { seededRandom } from '../../src/ranking/seeded-random.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { baseGeneration, buildDataset, PYTHON } from './support.js';

const unitTests = fileURLToPath(new URL('./python', import.meta.url));
const scriptDirectory = fileURLToPath(new URL('../../src/train/python', import.meta.url));
// Tests must not leave __pycache__ beside the sources.
const pythonEnvironment = { ...process.env, PYTHONDONTWRITEBYTECODE: '1' };

const directory = temporaryDirectory('mass-train-script-');
let dataset: string;

beforeAll(async () => {
  dataset = await buildDataset(join(directory.path, 'dataset'));
});
afterAll(() => directory.remove());

describe('train_lora.py on a plain python3', () => {
  it('is the script the back-end runs by default, and compiles', () => {
    expect(existsSync(PYTHON_TRAINER_SCRIPT)).toBe(true);
    const compiled = spawnSync(
      PYTHON,
      [
        '-c',
        'import sys, py_compile; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)',
        PYTHON_TRAINER_SCRIPT,
        join(directory.path, 'train_lora.pyc'),
      ],
      { encoding: 'utf8', env: pythonEnvironment },
    );
    expect(compiled.status, compiled.stderr).toBe(0);
  });

  it('passes its unit tests on a dataset that writeTrainingData built', () => {
    // The data side's tests; those that need torch run with the trainer's venv (python-training.e2e.test.ts).
    const run = spawnSync(
      PYTHON,
      ['-m', 'unittest', 'discover', '-s', unitTests, '-p', 'test_train_lora.py', '-v'],
      {
        encoding: 'utf8',
        env: { ...pythonEnvironment, MASS_TRAIN_DATASET: dataset },
      },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/skipped/);
    expect(run.stderr).toMatch(/Ran \d+ tests/);
  });

  const torchInstalled = spawnSync(PYTHON, ['-c', 'import torch']).status === 0;
  it.skipIf(torchInstalled)(
    'refuses to train without torch, saying what to install and naming the log',
    async () => {
      const outDir = join(directory.path, 'no-torch');
      const error = await pythonTrainer({ python: PYTHON, env: { PYTHONDONTWRITEBYTECODE: '1' } })
        .train({ dataset, parent: baseGeneration(), outDir, seed: 0, hyper: { steps: 3 } })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UserError);
      const message = (error as Error).message;
      expect(message).toMatch(/torch is not installed for .*python.*: pip install -r .*requirements\.txt/);
      expect(message).toContain(join(outDir, 'train.log'));
      // It got as far as the plan: the data loaded and the sampler ran before torch was needed.
      expect(existsSync(join(outDir, 'plan.json'))).toBe(true);
    },
  );
});

describe("the script's sampler is the TypeScript sampler", () => {
  it('plans, in a dry run, the very windows sampleWindows draws, with the resolved recipe', async () => {
    const hyper = { steps: 40, batchSize: 3, evalEvery: 10, checkpointEvery: 20 };
    const plan = await pythonTrainer({ python: PYTHON, env: { PYTHONDONTWRITEBYTECODE: '1' } }).dryRun({
      dataset,
      parent: baseGeneration(),
      outDir: join(directory.path, 'plan'),
      seed: 11,
      hyper,
    });
    const windows = await readWindowSummaries(dataset, 'train');
    const expected = sampleWindows(windows, { steps: 40, batchSize: 3, seed: 11 });
    expect(plan.draws).toEqual([...expected.draws]);
    expect(plan.processedSupervisedTokens).toBe(expected.processedSupervisedTokens);
    expect(plan.train.supervisedTokens).toBe(expected.storedSupervisedTokens);
    expect(plan.hyper).toEqual(resolveHyperparameters(hyper));
    expect(plan.parentModel).toBe('/models/base');
    expect(plan.evaluationSteps).toEqual([10, 20, 30, 40]);
    expect(plan.checkpointSteps).toEqual([20, 40]);
    expect(plan.learningRates['0']).toBeCloseTo(3e-5 / 5, 12);
    expect(plan.learningRates['39']).toBeCloseTo(3e-6, 12);
  });

  it('draws the same windows on many tasks, roles and probabilities', () => {
    const random = seededRandom(3);
    const roles = ['orchestrator', 'subagent', 'auxiliary'] as const;
    // Names beyond the basic plane sort differently by code point (Python) and by UTF-16 unit (JavaScript).
    const suffixes = ['', '', '', '-\u{1F600}', '-\uFF21'];
    const windows: SampleableWindow[] = Array.from({ length: 60 }, (_, index) => ({
      task: `task-${Math.floor(random() * 4)}${suffixes[index % suffixes.length]}`,
      role: roles[Math.floor(random() * 3)]!,
      supervisedTokens: 1 + Math.floor(random() * 500),
    }));
    const cases = [
      { seed: 0, orchestratorProbability: 1 / 3 },
      { seed: 99, orchestratorProbability: 0 },
      { seed: 2 ** 40 + 1, orchestratorProbability: 1 },
      { seed: 5, orchestratorProbability: 0.8 },
    ];
    const program = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(scriptDirectory)})`,
      'import window_sampler',
      'request = json.load(sys.stdin)',
      'print(json.dumps([window_sampler.sample_windows(request["windows"], 25, 4, case["seed"],',
      '    case["orchestratorProbability"]) for case in request["cases"]]))',
    ].join('\n');
    const output = execFileSync(PYTHON, ['-c', program], {
      input: JSON.stringify({ windows, cases }),
      encoding: 'utf8',
      env: pythonEnvironment,
    });
    const pythonDraws = JSON.parse(output) as number[][];
    for (const [index, sample] of cases.entries()) {
      const expected = sampleWindows(windows, { steps: 25, batchSize: 4, ...sample });
      expect(pythonDraws[index], JSON.stringify(sample)).toEqual([...expected.draws]);
    }
  });
});
