import { describe, expect, it } from 'vitest';

import { episodeSettings } from '../../src/episode/episode-settings.js';
import { parseRunConfig } from '../../src/config/run-config.js';

const minimal = {
  name: 'try-1',
  suite: 'suites/research-12',
  roles: { executor: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3-8B' } },
};

describe('sandboxHide', () => {
  it('reaches every episode of the run, and takes absolute host paths only', () => {
    const config = parseRunConfig({ ...minimal, sandboxHide: ['/srv/keys', '/etc/app.env'] }, 'config.yaml');
    expect(episodeSettings(config).sandboxHide).toEqual(['/srv/keys', '/etc/app.env']);
    expect(() => parseRunConfig({ ...minimal, sandboxHide: ['keys'] }, 'config.yaml')).toThrow(
      'config.yaml: sandboxHide.0: an absolute host path',
    );
  });
});
