import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { parseRunConfig, RunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { UserError } from '../../src/errors.js';
import { modelKind } from '../../src/hosting/model-kind.js';
import { deploySetting } from '../../src/config/rsi-settings.js';
import { runGenerations } from '../../src/rsi/run-generations.js';
import { runSession } from '../../src/session/run-session.js';
import { openRun } from '../../src/store/run-store.js';
import { temporaryDirectory } from '../support/fixtures.js';
import { rejection } from '../train/support.js';

// A real model's configuration; nothing listens on the port, and nothing must try to reach it.
const configuration = (deploy?: object, lineage?: string) =>
  parseRunConfig(
    {
      name: 'lora-two-rounds',
      suite: DEMO_SUITE,
      tasks: ['demo-volatility'],
      roles: { executor: { baseUrl: 'http://127.0.0.1:9/v1', model: 'Qwen/Qwen3.6-27B' } },
      ...(deploy || lineage
        ? { rsi: { ...(deploy ? { deploy } : {}), ...(lineage ? { lineage } : {}) } }
        : {}),
    },
    'rsi.yaml',
  );

describe('deployment by runtime LoRA loading', () => {
  const directory = temporaryDirectory('mass-rsi-deploy-');
  afterAll(() => directory.remove());

  it('is refused at the start of a loop of two rounds, naming deploy: restart, before anything runs', async () => {
    const config = configuration();
    expect(deploySetting(config.rsi).kind).toBe('lora');
    const run = openRun({
      runsDirectory: directory.path,
      name: config.name,
      configSchema: RunConfig,
      config,
    });
    try {
      const error = await rejection(runGenerations({ session: runSession(run, DEMO_SUITE), rounds: 2 }));
      expect(error).toBeInstanceOf(UserError);
      expect(error.message).toMatch(/rsi\.deploy\.kind lora can serve only the first trained generation, L1/);
      expect(error.message).toMatch(
        /For --rounds 2, deploy with `rsi\.deploy: \{ kind: restart, argv: \[\.\.\.\] \}`/,
      );
      // Refused before the first stage: no episode, no search, no registry.
      expect(
        readdirSync(run.directory).filter((entry) => ['episodes', 'search', 'train'].includes(entry)),
      ).toEqual([]);
      expect(existsSync(join(run.directory, 'train', 'registry.json'))).toBe(false);
    } finally {
      run.close();
    }
  });

  it('is accepted for one round, and a restart command for any number', () => {
    expect(() => modelKind(configuration()).host.checkRounds(1)).not.toThrow();
    const restart = configuration({ kind: 'restart', argv: ['systemctl', 'restart', 'vllm'] });
    expect(() => modelKind(restart).host.checkRounds(5)).not.toThrow();
    expect(() => modelKind(configuration()).host.checkRounds(3)).toThrow(/For --rounds 3/);
    expect(() => modelKind(configuration()).host.checkRounds(3)).toThrow(
      /or keep every generation an adapter over the base model.*`rsi\.lineage: adapters`/,
    );
  });

  it('is accepted for any number of rounds when every generation is an adapter over the base (lineage adapters)', () => {
    expect(() => modelKind(configuration(undefined, 'adapters')).host.checkRounds(3)).not.toThrow();
    expect(() => modelKind(configuration({ kind: 'lora' }, 'merged')).host.checkRounds(2)).toThrow(
      /For --rounds 2/,
    );
  });
});
