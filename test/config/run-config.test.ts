import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import {
  loadRunConfig,
  parseRunConfig,
  roleEndpoints,
  runConfigJsonSchema,
} from '../../src/config/run-config.js';
import { temporaryDirectory } from '../support/fixtures.js';

const minimal = {
  name: 'try-1',
  suite: 'suites/research-12',
  roles: { executor: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3-8B' } },
};

describe('the run configuration', () => {
  it('fills the paper’s defaults, and the executor plays every role not named', () => {
    const config = parseRunConfig(minimal, 'config.yaml');
    expect(config.sampling).toEqual({ temperature: 0.6, topP: 0.95, topK: 20, enableThinking: true });
    expect(config.search).toMatchObject({ iterations: 11, championRule: 'paper', judgeMode: 'random' });
    expect(config.budgets).toMatchObject({
      maxOutputTokensPerCall: 32_768,
      judgeMaxTokens: 49_152,
      contextWindowSize: 262_144,
    });
    const roles = roleEndpoints(config);
    expect(roles.judge.model).toBe('Qwen/Qwen3-8B');
    expect(roles.optimizer).toEqual(roles.executor);
  });

  it('takes another model for one role (the optimizer ablation)', () => {
    const config = parseRunConfig(
      {
        ...minimal,
        roles: {
          ...minimal.roles,
          optimizer: { provider: 'anthropic', model: 'claude-x', apiKeyEnv: 'ANTHROPIC_API_KEY' },
        },
      },
      'config.yaml',
    );
    expect(roleEndpoints(config).optimizer).toMatchObject({ provider: 'anthropic', model: 'claude-x' });
  });

  it('names the file and every bad field', async () => {
    const directory = temporaryDirectory();
    const file = join(directory.path, 'config.yaml');
    writeFileSync(
      file,
      'name: try 1\nsuite: s\nroles:\n  executor: { model: m, baseUrl: nope }\nsearch: { championRule: best, iterations: -1 }\nextra: 1\n',
    );
    const failure = loadRunConfig(file);
    await expect(failure).rejects.toThrow(`${file}: name:`);
    await expect(failure).rejects.toThrow(`${file}: roles.executor.baseUrl:`);
    await expect(failure).rejects.toThrow(`${file}: search.championRule:`);
    await expect(failure).rejects.toThrow(`${file}: search.iterations:`);
    await expect(failure).rejects.toThrow(/\(top level\): Unrecognized key.*extra/);
    directory.remove();
  });

  it('refuses a run name that would put its folder outside --runs or among mass’s own (.staging)', () => {
    for (const name of ['..', '.', '.staging']) {
      expect(() => parseRunConfig({ ...minimal, name }, 'c.yaml')).toThrow(/name/);
    }
    expect(parseRunConfig({ ...minimal, name: 'try-1.b' }, 'c.yaml').name).toBe('try-1.b');
  });

  it('has a JSON Schema for editors', () => {
    const schema = runConfigJsonSchema() as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(['roles', 'search', 'budgets', 'sampling']),
    );
    expect(schema.required).toEqual(expect.arrayContaining(['name', 'suite', 'roles']));
  });
  it('pairs the toy model with the toy trainer, and needs enough runs for selection', () => {
    expect(parseRunConfig(minimal, 'c.yaml').rsi).toEqual({
      trainer: { kind: 'python' },
      deploy: { kind: 'lora' },
      servedAs: '{run}-{generation}',
    });
    const toy = { ...minimal, roles: { executor: { provider: 'toy', model: 'mass-toy' } } };
    expect(() => parseRunConfig(toy, 'c.yaml')).toThrow(
      /c\.yaml: rsi\.trainer\.kind: the toy model is trained by the toy trainer/,
    );
    expect(() => parseRunConfig({ ...minimal, rsi: { trainer: { kind: 'toy' } } }, 'c.yaml')).toThrow(
      /rsi\.trainer\.kind: the toy trainer trains only the toy model/,
    );
    expect(
      parseRunConfig({ ...toy, rsi: { trainer: { kind: 'toy' }, deploy: { kind: 'toy' } } }, 'c.yaml').rsi,
    ).toMatchObject({ trainer: { kind: 'toy' } });
    expect(() => parseRunConfig({ ...minimal, distill: { needed: 10 } }, 'c.yaml')).toThrow(
      /distill\.needed: selection needs train \+ validation = 16 successful runs; needed is 10/,
    );
    expect(() => parseRunConfig({ ...minimal, rsi: { servedAs: 'mine' } }, 'c.yaml')).toThrow(
      /rsi\.servedAs: must contain \{generation\}/,
    );
  });
});
