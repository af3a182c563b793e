import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import {
  checkTrainingTokenizer,
  familyOfModelDirectory,
  familyOfModelName,
} from '../../src/distill/index.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { qwen35StyleDirectory } from './qwen35-style.js';

describe('the tokenizer family', () => {
  const directory = temporaryDirectory('mass-tokenizer-family-');
  afterAll(() => directory.remove());

  function modelDirectory(name: string, files: Record<string, unknown>): string {
    const dir = join(directory.path, name);
    mkdirSync(dir);
    for (const [file, value] of Object.entries(files)) writeFileSync(join(dir, file), JSON.stringify(value));
    return dir;
  }

  it('of a model name: the Qwen generations that share one vocabulary', () => {
    expect(familyOfModelName('Qwen/Qwen3-8B')).toBe('qwen3');
    expect(familyOfModelName('Qwen/Qwen3-Coder-30B-A3B-Instruct')).toBe('qwen3');
    expect(familyOfModelName('/models/qwen3-next-80b')).toBe('qwen3');
    expect(familyOfModelName('Qwen/Qwen3.6-27B')).toBe('qwen3.5');
    expect(familyOfModelName('Qwen/Qwen3.5-397B-A17B')).toBe('qwen3.5');
    expect(familyOfModelName('Qwen/Qwen2.5-7B-Instruct')).toBe('qwen2');
    // The folder a model lives in says nothing about it; a name of the run's own says nothing either.
    expect(familyOfModelName('/srv/qwen3-models/llama-3.1-8b')).toBeUndefined();
    expect(familyOfModelName('myrun-L1')).toBeUndefined();
  });

  it('of a model directory: its model_type, else the name it was saved from, else its own name', async () => {
    const byType = modelDirectory('weights', { 'config.json': { model_type: 'qwen3_5' } });
    expect(await familyOfModelDirectory(byType)).toEqual({
      declared: `${byType} (model_type "qwen3_5")`,
      family: 'qwen3.5',
    });
    const byName = modelDirectory('tokenizer-only', {
      'tokenizer_config.json': { name_or_path: 'Qwen/Qwen3-8B' },
    });
    expect((await familyOfModelDirectory(byName)).family).toBe('qwen3');
    expect((await familyOfModelDirectory(qwen35StyleDirectory())).family).toBe('qwen3.5');
    expect((await familyOfModelDirectory(modelDirectory('Qwen3.6-27B', {}))).family).toBe('qwen3.5');
    expect((await familyOfModelDirectory(modelDirectory('unnamed', {}))).family).toBeUndefined();
    expect((await familyOfModelDirectory(undefined)).family).toBe('qwen3');
  });

  it('refuses Qwen3’s files for a Qwen3.6 and a Qwen3.5-style directory for a Qwen3, naming both, unless allowed', async () => {
    await expect(
      checkTrainingTokenizer({ modelDirectory: undefined, servedModels: ['Qwen/Qwen3.6-27B'] }),
    ).rejects.toThrow(
      /Qwen3's tokenizer \(the default, .*\) \(family qwen3\), is not that of the served model "Qwen\/Qwen3.6-27B" \(family qwen3.5\)/,
    );
    const fixture = qwen35StyleDirectory();
    await expect(
      checkTrainingTokenizer({
        modelDirectory: fixture,
        servedModels: ['Qwen/Qwen3.6-27B', 'Qwen/Qwen3-8B'],
      }),
    ).rejects.toThrow(new RegExp(`${fixture} .*family qwen3.5.*"Qwen/Qwen3-8B" \\(family qwen3\\)`));
    expect(
      await checkTrainingTokenizer({
        modelDirectory: undefined,
        servedModels: ['Qwen/Qwen3.6-27B'],
        allowMismatch: true,
      }),
    ).toMatchObject({ verdict: 'mismatch-allowed' });
    expect(
      await checkTrainingTokenizer({ modelDirectory: fixture, servedModels: ['Qwen/Qwen3.6-27B'] }),
    ).toMatchObject({ family: 'qwen3.5', verdict: 'same-family' });
    expect(
      await checkTrainingTokenizer({ modelDirectory: undefined, servedModels: ['Qwen/Qwen3-8B'] }),
    ).toMatchObject({ verdict: 'same-family' });
    // A name that tells no family cannot be compared: recorded, not refused.
    expect(
      await checkTrainingTokenizer({ modelDirectory: undefined, servedModels: ['team-model'] }),
    ).toMatchObject({ served: [{ model: 'team-model', family: null }], verdict: 'unverified' });
  });
});
