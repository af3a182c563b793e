import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { trainerSetting } from '../../src/config/rsi-settings.js';
import { parseRunConfig } from '../../src/config/run-config.js';
import { defaultTrainerPython, TRAINER_VENV } from '../../src/train/trainer-python.js';

describe("the trainer's Python", () => {
  it('is the virtual environment scripts/install-trainer.sh makes at the package root', () => {
    const root = fileURLToPath(new URL('../..', import.meta.url));
    expect(TRAINER_VENV).toBe(join(root, '.venv-trainer'));
    const script = fileURLToPath(new URL('../../scripts/install-trainer.sh', import.meta.url));
    expect(existsSync(script)).toBe(true);
  });

  it('is MASS_TRAINER_PYTHON when set, else the installed venv, else python3', () => {
    expect(defaultTrainerPython({ MASS_TRAINER_PYTHON: '/opt/train/bin/python' })).toBe(
      '/opt/train/bin/python',
    );
    const installed = join(TRAINER_VENV, 'bin', 'python');
    expect(defaultTrainerPython({ MASS_TRAINER_PYTHON: '' })).toBe(
      existsSync(installed) ? installed : 'python3',
    );
  });

  it('is left to that default by the run configuration unless it names one', () => {
    const minimal = {
      name: 'r',
      suite: 'suites/research-12',
      roles: { executor: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3-8B' } },
    };
    expect(trainerSetting(parseRunConfig(minimal, 'c.yaml').rsi)).toEqual({ kind: 'python' });
    const named = { ...minimal, rsi: { trainer: { kind: 'python', python: '/usr/bin/python3' } } };
    expect(parseRunConfig(named, 'c.yaml').rsi.trainer).toEqual({
      kind: 'python',
      python: '/usr/bin/python3',
    });
  });
});
