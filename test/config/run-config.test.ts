import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { deploySetting } from '../../src/config/rsi-settings.js';
import { modelKind } from '../../src/hosting/model-kind.js';
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
  it('names the model’s kind once, reads the old three toy settings as that one, and refuses what a kind cannot honour', () => {
    const served = parseRunConfig(minimal, 'c.yaml');
    expect(served.model).toEqual({ kind: 'served' });
    expect(served.rsi).toEqual({ servedAs: '{run}-{generation}' });
    expect(deploySetting(served.rsi)).toEqual({ kind: 'lora' });
    expect(modelKind(served).host.standIn).toBeNull();

    const toy = { ...minimal, model: { kind: 'toy' }, roles: { executor: { model: 'mass-toy' } } };
    expect(modelKind(parseRunConfig(toy, 'c.yaml')).host.standIn).toBe('toy');
    // The form of earlier versions: provider, trainer and deployment each naming the toy, faults on the executor.
    const old = parseRunConfig(
      {
        ...minimal,
        roles: {
          executor: { provider: 'toy', model: 'mass-toy', faults: { rate: 0.1 } },
          judge: { provider: 'toy', model: 'mass-toy-judge' },
        },
        rsi: { trainer: { kind: 'toy' }, deploy: { kind: 'toy' } },
        evaluation: { judges: [{ provider: 'toy', model: 'toy-judge' }] },
      },
      'old.yaml',
    );
    expect(old.model).toMatchObject({ kind: 'toy', faults: { rate: 0.1 } });
    expect(old.roles.executor).toEqual({
      provider: 'openai-compatible',
      model: 'mass-toy',
      maxConcurrency: 64,
    });
    expect(old.roles.judge).toMatchObject({ provider: 'openai-compatible', model: 'mass-toy-judge' });
    expect(old.rsi).toEqual({ servedAs: '{run}-{generation}' });
    expect(old.evaluation!.judges[0]).toMatchObject({ provider: 'openai-compatible', model: 'toy-judge' });

    const refusal = (config: object) => () => modelKind(parseRunConfig(config, 'c.yaml'));
    expect(refusal({ ...toy, rsi: { trainer: { kind: 'python' } } })).toThrow(
      /rsi\.trainer: model\.kind toy is trained by mass itself: remove rsi\.trainer/,
    );
    expect(refusal({ ...toy, rsi: { deploy: { kind: 'lora' } } })).toThrow(
      /rsi\.deploy: model\.kind toy is served by mass itself/,
    );
    expect(refusal({ ...toy, execution: { backend: 'queue', redis: 'redis://127.0.0.1:6379' } })).toThrow(
      /execution\.backend: model\.kind toy is served inside this process on a loopback port, which a mass worker on another machine cannot reach/,
    );
    expect(refusal({ ...minimal, roles: { executor: { model: 'm' } } })).toThrow(
      /roles\.executor\.baseUrl: an OpenAI-compatible server needs its address/,
    );
    expect(() => parseRunConfig({ ...minimal, rsi: { trainer: { kind: 'toy' } } }, 'c.yaml')).toThrow(
      /rsi\.trainer\.kind/,
    );
    expect(() => parseRunConfig({ ...minimal, distill: { needed: 10 } }, 'c.yaml')).toThrow(
      /distill\.needed: selection needs train \+ validation = 16 successful runs; needed is 10/,
    );
    expect(() => parseRunConfig({ ...minimal, rsi: { servedAs: 'mine' } }, 'c.yaml')).toThrow(
      /rsi\.servedAs: must contain \{generation\}/,
    );
  });
});
