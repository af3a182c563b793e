import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { parseRunConfig, RunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { UserError } from '../../src/errors.js';
import { runGenerations } from '../../src/rsi/run-generations.js';
import { runSession } from '../../src/session/run-session.js';
import { trainingTokenizer } from '../../src/session/training-tokenizer.js';
import { modelKind } from '../../src/hosting/model-kind.js';
import { openRun } from '../../src/store/run-store.js';
import { emptyMetrics } from '../../src/records/training-metrics.js';
import { ModelRegistry } from '../../src/records/registry.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { rejection } from '../train/support.js';

describe('the tokenizer of a generation’s training data', () => {
  const directory = temporaryDirectory('mass-rsi-tokenizer-');
  afterAll(() => directory.remove());

  const configuration = (name: string, rsi: Record<string, unknown> = {}) =>
    parseRunConfig(
      {
        name,
        suite: DEMO_SUITE,
        tasks: ['demo-volatility'],
        // Nothing listens on the port, and nothing must try to reach it.
        roles: { executor: { baseUrl: 'http://127.0.0.1:9/v1', model: 'Qwen/Qwen3.6-27B' } },
        rsi,
      },
      'rsi.yaml',
    );

  /** A weights directory saved with its tokenizer, as transformers saves one. */
  function weights(name: string): string {
    const dir = join(directory.path, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ model_type: 'qwen3_5' }));
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ eos_token: '<|im_end|>' }));
    return dir;
  }

  it('is each generation’s own weights directory, else its parent’s, else the configured one', async () => {
    const base = weights('models/Qwen3.6-27B');
    const config = configuration('own-weights', { baseModel: base });
    const run = join(directory.path, 'runs', 'own-weights');
    const registry = await ModelRegistry.open(run);
    // Before the base is registered: the configured base model.
    expect(
      (await trainingTokenizer(config, registry, 'L0', modelKind(config).anyTokenizer)).modelDirectory,
    ).toBe(base);
    await registry.addBase({ model: base, servedAs: 'Qwen/Qwen3.6-27B' });
    const merged = weights('runs/own-weights/train/L1/merged');
    await registry.addTrained({
      name: 'L1',
      parent: 'L0',
      datasetId: 'distill/L0/dataset',
      servedAs: 'own-weights-L1',
      result: { mergedPath: merged, logFile: join(run, 'train.log'), metrics: emptyMetrics() },
    });
    expect(await trainingTokenizer(config, registry, 'L1', modelKind(config).anyTokenizer)).toEqual({
      modelDirectory: merged,
      // L1 is served under the run's name: the base model's name is the one with a family.
      servedModel: 'Qwen/Qwen3.6-27B',
      allowTokenizerMismatch: false,
    });
    const configured = configuration('own-weights', { baseModel: base, modelDirectory: '/models/tokenizer' });
    expect(
      (await trainingTokenizer(configured, registry, 'L1', modelKind(configured).anyTokenizer))
        .modelDirectory,
    ).toBe('/models/tokenizer');
    const toy = parseRunConfig(
      { name: 'toy', suite: DEMO_SUITE, model: { kind: 'toy' }, roles: { executor: { model: 'mass-toy' } } },
      'toy.yaml',
    );
    const toyRegistry = await ModelRegistry.open(join(directory.path, 'toy'));
    expect(await trainingTokenizer(toy, toyRegistry, 'L0', modelKind(toy).anyTokenizer)).toEqual({
      modelDirectory: undefined,
      servedModel: 'mass-toy',
      allowTokenizerMismatch: true,
    });
  });

  it('refuses a loop on a Qwen3.6 with Qwen3’s files (the default) before anything runs, saying what to set', async () => {
    const config = configuration('qwen36-default');
    const run = openRun({
      runsDirectory: directory.path,
      name: config.name,
      configSchema: RunConfig,
      config,
    });
    try {
      const error = await rejection(runGenerations({ session: runSession(run, DEMO_SUITE), rounds: 1 }));
      expect(error).toBeInstanceOf(UserError);
      expect(error.message).toMatch(
        /Qwen3's tokenizer .*family qwen3\), is not that of the served model "Qwen\/Qwen3.6-27B" \(family qwen3.5\).*rsi\.modelDirectory.*rsi\.allowTokenizerMismatch/s,
      );
      expect(
        readdirSync(run.directory).filter((entry) => ['episodes', 'search', 'train'].includes(entry)),
      ).toEqual([]);
      expect(existsSync(join(run.directory, 'train', 'registry.json'))).toBe(false);
    } finally {
      run.close();
    }
  });
});
