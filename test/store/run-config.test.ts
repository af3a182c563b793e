import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';

import { UserError } from '../../src/errors.js';
import { testConfig } from './__fixtures__/test-config.js';
import { openTestRun, temporaryDirectory } from './__fixtures__/test-run.js';
import { ConfigMismatchError } from '../../src/store/frozen-config.js';

describe('the frozen config.yaml', () => {
  it('is written when the run starts, with defaults filled in', () => {
    const runsDirectory = temporaryDirectory();

    const run = openTestRun(runsDirectory);

    const frozen: unknown = YAML.parse(readFileSync(join(run.directory, 'config.yaml'), 'utf8'));
    expect(frozen).toEqual({ ...testConfig, notes: '' });
    expect(run.config).toEqual({ ...testConfig, notes: '' });
  });

  it('lets the run be resumed with the same configuration, or with none', () => {
    const runsDirectory = temporaryDirectory();
    openTestRun(runsDirectory).close();

    openTestRun(runsDirectory, { config: { ...testConfig, notes: '' } }).close();
    const resumed = openTestRun(runsDirectory, { config: undefined });

    expect(resumed.config.model).toEqual({ name: 'toy', temperature: 0.6 });
  });

  it('refuses a different configuration, naming each differing field', () => {
    const runsDirectory = temporaryDirectory();
    openTestRun(runsDirectory).close();
    const changed = { ...testConfig, model: { name: 'toy', temperature: 0.7 }, seeds: [1, 2] };

    const attempt = (): unknown => openTestRun(runsDirectory, { config: changed });

    expect(attempt).toThrow(ConfigMismatchError);
    expect(attempt).toThrow(/config\.yaml: this run started with a different configuration/);
    expect(attempt).toThrow(
      'model.temperature: 0.6 in config.yaml, 0.7 now; seeds: [1,2,3] in config.yaml, [1,2] now',
    );
    expect(attempt).toThrow(
      'Start a new run under another name, or explicitly override the frozen configuration',
    );
  });

  it('accepts a different configuration with the override, keeping the old file', () => {
    const runsDirectory = temporaryDirectory();
    openTestRun(runsDirectory).close();
    const changed = { ...testConfig, model: { name: 'toy', temperature: 0.7 } };

    const run = openTestRun(runsDirectory, { config: changed, overrideConfig: true });

    expect(run.config.model.temperature).toBe(0.7);
    expect(run.configChanges).toEqual([{ field: 'model.temperature', frozen: 0.6, given: 0.7 }]);
    const replaced = readdirSync(run.directory).filter((name) => name.startsWith('config.replaced-'));
    expect(replaced).toHaveLength(1);
    expect(readFileSync(join(run.directory, replaced[0] ?? ''), 'utf8')).toContain('temperature: 0.6');
  });

  it('refuses a configuration that fails validation, naming the field', () => {
    const runsDirectory = temporaryDirectory();
    const invalid = { ...testConfig, seeds: [1, 'two'] };

    // @ts-expect-error: an invalid seed is the point of this test
    expect(() => openTestRun(runsDirectory, { config: invalid })).toThrow(
      'the configuration given is not a valid configuration: seeds[1]: ',
    );
    expect(existsSync(join(runsDirectory, 'test-run', 'config.yaml'))).toBe(false);
  });

  it('refuses to open a run that was never started', () => {
    const runsDirectory = temporaryDirectory();

    expect(() => openTestRun(runsDirectory, { name: 'nope', config: undefined })).toThrow(
      /there is no run "nope" in .* \(no config\.yaml\); check the name, or give a configuration to start it/,
    );
    expect(existsSync(join(runsDirectory, 'nope'))).toBe(false);
  });

  it('refuses run names that are not plain folder names', () => {
    const runsDirectory = temporaryDirectory();

    expect(() => openTestRun(runsDirectory, { name: '../elsewhere' })).toThrow(UserError);
    expect(() => openTestRun(runsDirectory, { name: '' })).toThrow('is not a valid run name');
  });
});
