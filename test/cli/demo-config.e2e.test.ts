import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { RunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE, demoConfig } from '../../src/demo/demo-config.js';
import { searchTaskDirs } from '../../src/search/search-config.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';

describe('the demo configuration', () => {
  it('is a valid run configuration for the toy model, over the demo suite’s train tasks', async () => {
    const config = RunConfig.parse(demoConfig('demo'));
    expect(config.model.kind).toBe('toy');
    expect(config.distill.needed).toBeGreaterThanOrEqual(config.distill.train + config.distill.validation);
    const tasks = await searchTaskDirs(DEMO_SUITE, config.tasks);
    expect(tasks.map((dir) => dir.split('/').at(-1))).toEqual(['demo-potency', 'demo-volatility']);
  });

  it('refuses a folder holding a run of another version of the demo, saying what to do', async () => {
    const directory = temporaryDirectory();
    const out = join(directory.path, 'demo');
    mkdirSync(out);
    const older = demoConfig('demo');
    writeFileSync(join(out, 'config.yaml'), stringify({ ...older, distill: { ...older.distill, runs: 5 } }));
    const result = await runMass(['demo', '--out', out]);
    directory.remove();
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'another version of the demo (it differs in distill.runs): delete that folder',
    );
  });

  it('--faults puts injected faults on the toy model, and takes only a share between 0 and 1', async () => {
    const directory = temporaryDirectory();
    const out = join(directory.path, 'demo');
    mkdirSync(out);
    writeFileSync(join(out, 'config.yaml'), stringify(demoConfig('demo')));
    // A fault-free demo run is there: the same demo with faults differs in them alone.
    const faulty = await runMass(['demo', '--out', out, '--faults', '0.1']);
    const wrong = await runMass(['demo', '--out', out, '--faults', '2']);
    directory.remove();
    expect(faulty.code).toBe(2);
    expect(faulty.stderr).toContain('(it differs in model.faults)');
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--faults 2: give the share of requests to fail, between 0 and 1');
  });
});
