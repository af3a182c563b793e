import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { readWindowSummaries } from '../../src/distill/read-window-summaries.js';
import { sampleWindows } from '../../src/distill/window-sampler.js';
import { PythonTrainingPlan, PythonTrainingReport } from '../../src/train/python-records.js';
import { studentTrainingPlan } from '../../src/students/student-tokens.js';
import { pythonTrainer } from '../../src/train/python-trainer.js';
import { defaultTrainerPython } from '../../src/train/trainer-python.js';
import type { TrainingResult } from '../../src/records/training-metrics.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { sharedTinyModels, TORCH_ENVIRONMENT, type TinyModel } from '../support/shared-runs.js';
import { baseGeneration, tinyDataset, trainerLibrariesMissing } from './support.js';

// The trainer's Python: MASS_TRAINER_PYTHON, else the .venv-trainer/ of scripts/install-trainer.sh.
const python = defaultTrainerPython();
const tinyModels = fileURLToPath(new URL('./python/tiny_models.py', import.meta.url));
const environment = TORCH_ENVIRONMENT;

const missing = trainerLibrariesMissing(python, environment);
if (missing !== undefined) {
  console.warn(
    `python-torch.e2e.test.ts skipped: ${missing}; run \`bash scripts/install-trainer.sh\` (or set MASS_TRAINER_PYTHON)`,
  );
}

interface MergedCheck {
  architecture: string;
  generated: number[];
  changed: string[];
  missing: string[];
  added: string[];
  adapterModules: string[];
  files: string[];
}
const MODELS = ['qwen3', 'qwen3_5'] as const;
const requirements = fileURLToPath(new URL('../../src/train/python/requirements.txt', import.meta.url));
const pinned = Object.fromEntries(
  [...readFileSync(requirements, 'utf8').matchAll(/^(torch|transformers|peft)==(\S+)$/gm)].map((match) => [
    match[1]!,
    match[2]!,
  ]),
);
type ModelName = (typeof MODELS)[number];

/**
 * The real trainer (TypeScript back-end and train_lora.py, torch on CPU) on tiny random models of both families:
 * 2 steps on short windows, validation and a checkpoint after each, the better one chosen and merged, the merged
 * model reloaded and asked for a few tokens. Everything is done once in `beforeAll` (three Python processes:
 * import time is most of the cost); the tests read what was recorded.
 */
describe.skipIf(missing !== undefined)('train_lora.py with torch, on tiny Qwen3 and Qwen3.5 models', () => {
  const directory = temporaryDirectory('mass-train-torch-');
  const built = {} as Record<ModelName, TinyModel>;
  const results = {} as Record<ModelName, TrainingResult>;
  const reports = {} as Record<ModelName, PythonTrainingReport>;
  const plans = {} as Record<ModelName, PythonTrainingPlan>;
  let checks: Record<ModelName, MergedCheck>;
  let expected: ReturnType<typeof sampleWindows>;
  let seconds = 0;

  beforeAll(async () => {
    const started = Date.now();
    const run = (args: string[]) =>
      execFileSync(python, [tinyModels, ...args], {
        encoding: 'utf8',
        env: { ...process.env, ...environment },
        maxBuffer: 16 * 1024 * 1024,
      });
    // Built by whichever file asks first (test/support/shared-runs.ts); the parents are only read.
    Object.assign(built, await sharedTinyModels(python));
    const dataset = await tinyDataset(join(directory.path, 'dataset'));
    expected = sampleWindows(await readWindowSummaries(dataset, 'train'), {
      steps: 2,
      batchSize: 3,
      seed: 3,
    });
    const trainer = pythonTrainer({ python, env: environment });
    for (const name of MODELS) {
      const outDir = join(directory.path, 'train', name);
      results[name] = await trainer.train({
        dataset,
        parent: baseGeneration({ mergedPath: built[name].path }),
        outDir,
        seed: 3,
        // A learning rate that moves a random model in 2 steps; float32 so that the comparison of weights is exact.
        hyper: {
          steps: 2,
          warmupSteps: 0,
          evalEvery: 1,
          checkpointEvery: 1,
          learningRate: 1e-2,
          loraRank: 4,
          loraAlpha: 8,
          dtype: 'float32',
        },
      });
      reports[name] = await PythonTrainingReport.read(join(outDir, 'report.json'));
      plans[name] = await PythonTrainingPlan.read(join(outDir, 'plan.json'));
    }
    const request = Object.fromEntries(
      MODELS.map((name) => [
        name,
        { parent: built[name].path, merged: results[name].mergedPath, adapter: results[name].adapterPath },
      ]),
    );
    writeFileSync(join(directory.path, 'check.json'), JSON.stringify(request));
    checks = JSON.parse(run(['check', join(directory.path, 'check.json')])) as typeof checks;
    seconds = (Date.now() - started) / 1000;
    console.info(
      `python-torch.e2e.test.ts: built, trained, merged and checked both models in ${seconds.toFixed(1)} s`,
    );
  }, 480_000);
  afterAll(() => directory.remove());

  it.each(MODELS)(
    '%s: trains 2 steps, chooses the checkpoint with the lower validation loss, merges it',
    (name) => {
      const { metrics, mergedPath } = results[name];
      expect(metrics.steps).toBe(2);
      expect(metrics.trainLoss.map((point) => point.step)).toEqual([1, 2]);
      const validation = metrics.validationLoss.map((point) => point.loss);
      expect(validation).toHaveLength(2);
      expect(validation.every((loss) => Number.isFinite(loss) && loss > 0)).toBe(true);
      // The two steps changed the model: the losses differ.
      expect(validation[0]).not.toBeCloseTo(validation[1]!, 6);
      const best = validation[0]! <= validation[1]! ? 1 : 2;
      expect(metrics.chosenCheckpoint).toMatchObject({ step: best, validationLoss: Math.min(...validation) });
      expect(results[name].adapterPath).toBe(
        join(directory.path, 'train', name, `checkpoints/step-00000${best}`),
      );
      expect(mergedPath).toBe(join(directory.path, 'train', name, 'merged'));
      // 3 windows a step (the official recipe), the ones the TypeScript sampler draws.
      expect(plans[name].draws).toEqual([...expected.draws]);
      expect(expected.draws).toHaveLength(6);
      expect(metrics.supervisedTokensProcessed).toBe(expected.processedSupervisedTokens);
      // It ran on the versions requirements.txt pins (torch's build suffix aside: 2.13.0+cpu).
      expect(Object.keys(pinned).sort()).toEqual(['peft', 'torch', 'transformers']);
      for (const [library, version] of Object.entries(pinned)) {
        expect(reports[name].versions[library], library).toMatch(
          new RegExp(`^${version.replaceAll('.', '\\.')}(\\+|$)`),
        );
      }
      const log = readFileSync(results[name].logFile, 'utf8');
      expect(log).toMatch(/step 2\/2 loss \d/);
      expect(log).toMatch(/chosen checkpoint: step [12]/);
    },
  );

  it.each(MODELS)('%s: the merged model reloads as its parent was, and generates', (name) => {
    const check = checks[name];
    expect(check.architecture).toBe(
      name === 'qwen3' ? 'Qwen3ForCausalLM' : 'Qwen3_5ForConditionalGeneration',
    );
    expect(reports[name].modelClass).toBe(check.architecture);
    expect(check.generated).toHaveLength(4);
    expect(check.generated.every((id) => Number.isInteger(id) && id >= 0 && id < 64)).toBe(true);
    // Every tensor of the parent is there, nothing else, and the parent's other files came along.
    expect(check.missing).toEqual([]);
    expect(check.added).toEqual([]);
    expect(check.files).toEqual(
      expect.arrayContaining([
        'config.json',
        'model.safetensors',
        'tokenizer.json',
        'preprocessor_config.json',
      ]),
    );
  });

  it('Qwen3: LoRA on every attention and MLP projection, and only those weights changed', () => {
    const { adapterModules, changed } = checks.qwen3;
    const projections = built.qwen3.linearLayers.filter((layer) => layer !== 'lm_head');
    expect(projections).toHaveLength(2 * 7);
    expect(adapterModules.map((module) => module.replace(/^base_model\.model\./, ''))).toEqual(
      [...projections].sort(),
    );
    expect(changed).toEqual(projections.map((layer) => `${layer}.weight`).sort());
    expect(reports.qwen3.loraTargets).toEqual({
      q_proj: 2,
      k_proj: 2,
      v_proj: 2,
      o_proj: 2,
      gate_proj: 2,
      up_proj: 2,
      down_proj: 2,
    });
  });

  it("Qwen3.5: LoRA on the language model's attention, linear-attention and MLP projections, nothing in the vision tower", () => {
    const { adapterModules, changed } = checks.qwen3_5;
    const modules = adapterModules.map((module) => module.replace(/^base_model\.model\./, ''));
    expect(modules.every((module) => module.startsWith('model.language_model.layers.'))).toBe(true);
    expect(reports.qwen3_5.loraTargets).toEqual({
      // Layers 0–2 are linear attention, layer 3 full attention; every layer has an MLP.
      in_proj_qkv: 3,
      in_proj_z: 3,
      out_proj: 3,
      q_proj: 1,
      k_proj: 1,
      v_proj: 1,
      o_proj: 1,
      gate_proj: 4,
      up_proj: 4,
      down_proj: 4,
    });
    expect(modules).toHaveLength(25);
    const visionLayers = built.qwen3_5.linearLayers.filter((layer) => layer.startsWith('model.visual.'));
    expect(visionLayers.length).toBeGreaterThan(0);
    expect(modules.filter((module) => module.includes('visual'))).toEqual([]);
    // Merging changed exactly the targeted layers: the vision tower, the gates (in_proj_a/b), the embeddings and
    // the output head are the parent's, bit for bit.
    expect(changed).toEqual(modules.map((module) => `${module}.weight`).sort());
  });

  it('trains a student as mass students plans it: the tokens it processes are the ones the students record', async () => {
    // A student's plan: 2 passes over the tiny dataset's 3 windows, 2 a step, with a run's own orchestrator chance.
    const dataset = await tinyDataset(join(directory.path, 'student-dataset'));
    const plan = studentTrainingPlan(
      await readWindowSummaries(dataset, 'train'),
      { batchSize: 2, epochs: 2, seed: 5 },
      { orchestratorProbability: 0.9, warmupSteps: 0, loraRank: 4, loraAlpha: 8, mergeIntoParent: false },
    );
    expect(plan.tokens.steps).toBe(3);
    const outDir = join(directory.path, 'train', 'student');
    const result = await pythonTrainer({ python, env: environment }).train({
      dataset,
      parent: baseGeneration({ mergedPath: built.qwen3.path }),
      outDir,
      seed: 5,
      hyper: plan.hyper,
    });
    const drawn = await PythonTrainingPlan.read(join(outDir, 'plan.json'));
    expect(drawn.draws).toEqual([
      ...sampleWindows(await readWindowSummaries(dataset, 'train'), {
        steps: 3,
        batchSize: 2,
        seed: 5,
        orchestratorProbability: 0.9,
      }).draws,
    ]);
    expect(result.metrics.steps).toBe(3);
    expect(result.metrics.supervisedTokensProcessed).toBe(plan.tokens.processedSupervisedTokens);
  }, 240_000);
});
