import * as childProcess from 'node:child_process';
import { execFileSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';

import { describe, expect, it } from 'vitest';

import { takeRefusals, UNIT_TIER_REFUSAL } from '../support/unit-tier.js';

describe('the unit tier', () => {
  it('refuses every way of starting a process, however child_process was imported', async () => {
    const { exec } = await import('node:child_process');
    const required = createRequire(import.meta.url)('node:child_process') as typeof childProcess;
    const attempts = [
      () => spawn('true'),
      () => execFileSync('true'),
      () => exec('true'),
      () => childProcess.fork('true'),
      () => required.spawnSync('true'),
      () => required.execSync('true'),
      () => required.execFile('true'),
    ];
    for (const attempt of attempts) expect(attempt).toThrow(UNIT_TIER_REFUSAL);
    expect(takeRefusals()).toHaveLength(attempts.length);
  });
});
