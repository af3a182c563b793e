import { describe, expect, it } from 'vitest';

import { episodeSettings } from '../../src/episode/episode-settings.js';
import { parseRunConfig } from '../../src/config/run-config.js';
import {
  DEFAULT_SAMPLING,
  LEAN_DISABLED_TOOLS,
  qwenSettings,
  type HarnessProfile,
} from '../../src/harness/qwen-settings.js';

const minimal = {
  name: 'try-1',
  suite: 'suites/research-12',
  roles: { executor: { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3-8B' } },
};

function settings(profile: HarnessProfile, disabledTools?: string[]) {
  return qwenSettings({
    model: 'm',
    baseUrl: 'http://x/v1',
    apiKeyEnv: 'K',
    sampling: { ...DEFAULT_SAMPLING, seed: 1 },
    requestTimeoutMs: 1000,
    contextWindowSize: 1000,
    shellTimeoutMs: 1000,
    profile,
    ...(disabledTools ? { disabledTools } : {}),
  }) as { tools: { disabled?: string[] }; skills?: { disabledLevels?: string[] } };
}

describe('the harness profile', () => {
  it('is lean unless the configuration says stock, and reaches every episode of the run', () => {
    expect(episodeSettings(parseRunConfig(minimal, 'config.yaml')).harnessProfile).toBe('lean');
    const stock = parseRunConfig({ ...minimal, harnessProfile: 'stock' }, 'config.yaml');
    expect(episodeSettings(stock).harnessProfile).toBe('stock');
    expect(() => parseRunConfig({ ...minimal, harnessProfile: 'tiny' }, 'config.yaml')).toThrow(
      /config\.yaml: harnessProfile/,
    );
  });

  it('lean turns off the unusable tools and the bundled skills through qwen-code settings; stock keeps its defaults', () => {
    const lean = settings('lean');
    expect(lean.tools.disabled).toEqual([...LEAN_DISABLED_TOOLS]);
    for (const tool of ['web_fetch', 'monitor', 'loop_wakeup', 'zoom_image', 'skill'])
      expect(lean.tools.disabled).toContain(tool);
    for (const kept of [
      'agent',
      'run_shell_command',
      'read_file',
      'write_file',
      'edit',
      'glob',
      'grep_search',
    ])
      expect(lean.tools.disabled).not.toContain(kept);
    expect(lean.skills).toEqual({ disabledLevels: ['bundled'] });

    const stock = settings('stock');
    expect(stock.tools.disabled).toBeUndefined();
    expect(stock.skills).toBeUndefined();
  });

  it("adds the single-agent condition's removal of the agent tool to either profile", () => {
    expect(settings('stock', ['agent']).tools.disabled).toEqual(['agent']);
    expect(settings('lean', ['agent']).tools.disabled).toEqual([...LEAN_DISABLED_TOOLS, 'agent']);
  });
});
