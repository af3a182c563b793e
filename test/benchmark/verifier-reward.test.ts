import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { readReward } from '../../src/benchmark/verifier.js';
import { temporaryDirectory } from '../support/fixtures.js';

describe('reading a verifier’s reward as Harbor does', () => {
  const directory = temporaryDirectory();
  afterAll(() => directory.remove());
  let count = 0;
  const logs = (files: Record<string, string>) => {
    const dir = join(directory.path, `logs-${count++}`);
    mkdirSync(dir);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    return dir;
  };

  it('reward.txt first, one float', async () => {
    expect(await readReward(logs({ 'reward.txt': '0.75\n', 'reward.json': '{"reward": 1}' }))).toEqual({
      kind: 'scored',
      reward: 0.75,
      rewards: null,
      file: 'reward.txt',
    });
    expect(await readReward(logs({ 'reward.txt': 'passed' }))).toMatchObject({ kind: 'bad' });
    expect(await readReward(logs({ 'reward.txt': '' }))).toMatchObject({ kind: 'bad' });
  });

  it('reward.json: its "reward", or its only number; several without one named reward is an error', async () => {
    expect(await readReward(logs({ 'reward.json': '{"reward": 0.5, "passed": 3, "note": "x"}' }))).toEqual({
      kind: 'scored',
      reward: 0.5,
      rewards: { reward: 0.5, passed: 3 },
      file: 'reward.json',
    });
    expect(await readReward(logs({ 'reward.json': '{"accuracy": 0.9}' }))).toMatchObject({ reward: 0.9 });
    expect(await readReward(logs({ 'reward.json': '{"a": 1, "b": 0}' }))).toMatchObject({
      kind: 'bad',
      detail: expect.stringContaining('none is named "reward"'),
    });
    expect(await readReward(logs({ 'reward.json': '[1]' }))).toMatchObject({ kind: 'bad' });
    expect(await readReward(logs({ 'reward.json': '{"reward": ' }))).toMatchObject({ kind: 'bad' });
  });

  it('no file is no reward; a link is never followed to a file of the host', async () => {
    expect(await readReward(logs({}))).toEqual({ kind: 'none' });
    const linked = logs({});
    writeFileSync(join(directory.path, 'host-secret'), '1');
    symlinkSync(join(directory.path, 'host-secret'), join(linked, 'reward.txt'));
    expect(await readReward(linked)).toEqual({ kind: 'none' });
  });
});
