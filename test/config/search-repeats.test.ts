import { describe, expect, it } from 'vitest';

import { UserError } from '../../src/errors.js';
import { parseRunConfig, runConfigJsonSchema } from '../../src/config/run-config.js';
import { searchSettings } from '../../src/search/search-config.js';

const minimal = {
  name: 'noise',
  suite: 'suites/research-12',
  roles: { executor: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3-8B' } },
};

describe('search.repeats: the reruns that measure search noise', () => {
  it('is 0 (off) unless set, and reaches the search settings', () => {
    expect(parseRunConfig(minimal, 'run.yaml').search.repeats).toBe(0);
    const config = parseRunConfig({ ...minimal, search: { repeats: 2 } }, 'run.yaml');
    expect(config.search.repeats).toBe(2);
    expect(searchSettings(config).repeats).toBe(2);
  });

  it('refuses anything but a whole number from 0, naming the field and what to give', () => {
    for (const repeats of [-1, 1.5, 'two']) {
      const parse = () => parseRunConfig({ ...minimal, search: { repeats } }, 'run.yaml');
      expect(parse).toThrow(UserError);
      expect(parse).toThrow(
        'run.yaml: search.repeats: give a whole number of reruns of each champion design, 0 (the default) to measure no search noise, e.g. repeats: 2',
      );
    }
  });

  it('is described in the JSON Schema for editors', () => {
    const schema = runConfigJsonSchema() as {
      properties: { search: { properties: Record<string, { description?: string; default?: unknown }> } };
    };
    expect(schema.properties.search.properties.repeats).toMatchObject({ default: 0 });
    expect(schema.properties.search.properties.repeats!.description).toMatch(
      /reruns of each unchanged champion/,
    );
  });
});
