import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { parseRunConfig } from '../../src/config/run-config.js';
import { modelKind } from '../../src/hosting/model-kind.js';
import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';

const config = (roles: Record<string, unknown>) => {
  const parsed = parseRunConfig({ name: 'r', suite: 'suites/research-12', roles }, 'config.yaml');
  // Whether an address must be given is the model kind's rule.
  modelKind(parsed);
  return parsed;
};
const executor = { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3-8B' };

describe('base URLs in the run configuration', () => {
  it("refuses an executor's base URL without /v1, naming the field and the fix", () => {
    expect(() => config({ executor: { ...executor, baseUrl: 'http://127.0.0.1:8000' } })).toThrow(
      /config\.yaml: roles\.executor\.baseUrl: "http:\/\/127\.0\.0\.1:8000\/" does not end in \/v1 .*give e\.g\. http:\/\/127\.0\.0\.1:8000\/v1/,
    );
    expect(() => config({ executor: { ...executor, baseUrl: 'http://gpu-1:8000/serve' } })).toThrow(
      /roles\.executor\.baseUrl: .*give e\.g\. http:\/\/gpu-1:8000\/serve\/v1/,
    );
    expect(() => config({ executor: { model: 'm' } })).toThrow(
      /roles\.executor\.baseUrl: an OpenAI-compatible server needs its address/,
    );
    expect(
      config({ executor: { ...executor, baseUrl: 'http://127.0.0.1:8000/v1/' } }).roles.executor.model,
    ).toBe('Qwen/Qwen3-8B');
  });

  it('refuses a query, a fragment or another scheme, and never echoes a password', () => {
    expect(() => config({ executor: { ...executor, baseUrl: 'http://h:8000/v1?key=x' } })).toThrow(
      /roles\.executor\.baseUrl: .* has a query or fragment/,
    );
    expect(() => config({ executor: { ...executor, baseUrl: 'ftp://h/v1' } })).toThrow(
      /must start with http:\/\/ or https:\/\//,
    );
    let message = '';
    try {
      config({ executor: { ...executor, baseUrl: 'http://user:hunter22@h:8000' } });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('roles.executor.baseUrl');
    expect(message).not.toContain('hunter22');
  });

  it("checks each provider's base URL by how its SDK uses it", () => {
    const judge = (endpoint: Record<string, unknown>) => () => config({ executor, judge: endpoint });
    expect(judge({ provider: 'anthropic', model: 'c', baseUrl: 'https://api.anthropic.com/v1' })).toThrow(
      /roles\.judge\.baseUrl: .* ends in \/v1, which the Anthropic SDK adds itself/,
    );
    expect(judge({ provider: 'anthropic', model: 'c', baseUrl: 'https://api.anthropic.com' })).not.toThrow();
    expect(judge({ provider: 'openai', model: 'g', baseUrl: 'https://api.openai.com' })).toThrow(
      /roles\.judge\.baseUrl: .*OpenAI's API is under \/v1/,
    );
    // Another OpenAI-compatible server keeps its own version path.
    expect(
      judge({ model: 'g', baseUrl: 'https://generativelanguage.googleapis.com/v1beta/openai' }),
    ).not.toThrow();
    expect(judge({ model: 'g' })).toThrow(
      /roles\.judge\.baseUrl: an OpenAI-compatible server needs its address/,
    );
  });

  it('mass config check refuses a bad base URL; mass episode refuses a bad --base-url', async () => {
    const directory = temporaryDirectory();
    const file = join(directory.path, 'config.yaml');
    writeFileSync(
      file,
      'name: r\nsuite: s\nroles:\n  executor: { model: m, baseUrl: "http://127.0.0.1:8000" }\n',
    );
    const checked = await runMass(['config', 'check', file]);
    expect(checked.code).toBe(2);
    expect(checked.stderr).toContain(
      `${file}: roles.executor.baseUrl: "http://127.0.0.1:8000/" does not end in /v1`,
    );
    const episode = await runMass([
      'episode',
      '--task',
      'suites/demo/demo-volatility',
      '--model',
      'm',
      '--base-url',
      'http://127.0.0.1:1',
      '--seed',
      '1',
      '--out',
      join(directory.path, 'e'),
    ]);
    expect(episode.code).toBe(2);
    expect(episode.stderr).toContain('--base-url "http://127.0.0.1:1/" does not end in /v1');
    directory.remove();
  }, 60_000);
});
