/**
 * A mass process to be killed by a test: it opens a run, starts the step "slow", writes part of its
 * output, prints "inside-step" and waits. Arguments: <runsDirectory> <runName>.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

import { openRun } from '../../../src/store/run-store.js';
import { TestConfig } from './test-config.js';

const [runsDirectory, name] = process.argv.slice(2);
if (runsDirectory === undefined || name === undefined)
  throw new Error('usage: hold-step <runsDirectory> <name>');

const run = openRun({
  runsDirectory,
  name,
  configSchema: TestConfig,
  command: 'hold-step fixture',
});
await run.step(
  'slow',
  async () => {
    mkdirSync(run.path('slow'));
    writeFileSync(run.path('slow', 'partial.txt'), 'half of the output');
    process.stdout.write('inside-step\n');
    await sleep(60_000);
  },
  { dir: 'slow' },
);
