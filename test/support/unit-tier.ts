// Setup file of the unit tier (vitest.config.ts): a unit test starts no process. Every way node:child_process has of
// starting one throws instead, so a test that needs a harness, a Python grader, Redis, a browser or the `mass` CLI
// fails with the rule it broke, and moves to the end-to-end tier by its name. Code under test that catches the error
// (and records, say, a failed episode) does not hide it: the test fails afterwards all the same.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

import { afterAll, afterEach } from 'vitest';

export const UNIT_TIER_REFUSAL = 'unit tier: this test starts a process; name it *.e2e.test.ts';

const starters = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

/** Processes asked for since the last check, caught or not. */
let refused: string[] = [];

for (const name of starters) {
  const refuse = (command?: unknown) => {
    const call = `child_process.${name}(${JSON.stringify(String(command))})`;
    refused.push(call);
    throw new Error(`${UNIT_TIER_REFUSAL} (${call})`);
  };
  Object.defineProperty(childProcess, name, { value: refuse, configurable: true, writable: true });
}
// Code that imported `{ spawn }` from 'node:child_process' sees the replacement too.
syncBuiltinESMExports();

/** The refusals since the last check, forgotten: for the guard's own test. */
export function takeRefusals(): string[] {
  const calls = refused;
  refused = [];
  return calls;
}

function failOnRefusals(): void {
  if (refused.length === 0) return;
  const calls = [...new Set(refused)];
  refused = [];
  throw new Error(`${UNIT_TIER_REFUSAL} (${calls.join(', ')})`);
}

afterEach(failOnRefusals);
afterAll(failOnRefusals);
