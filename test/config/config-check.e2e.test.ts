import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { runMass } from '../support/cli.js';
import { temporaryDirectory } from '../support/fixtures.js';

// Split from role-sampling-and-context.test.ts: this one runs the `mass` CLI.
describe('mass config check', () => {
  it('prints what each role’s provider will be sent', async () => {
    const directory = temporaryDirectory();
    const file = join(directory.path, 'config.yaml');
    writeFileSync(
      file,
      [
        'name: r',
        'suite: s',
        'roles:',
        '  executor: { model: q, baseUrl: http://127.0.0.1:8000/v1 }',
        '  judge: { provider: anthropic, model: c, sampling: { thinking: adaptive, reasoningEffort: high } }',
        '',
      ].join('\n'),
    );
    try {
      const result = await runMass(['config', 'check', file]);
      expect(result.code).toBe(0);
      expect(result.stderr).toContain(
        '  judge (anthropic): {"reasoningEffort":"high","thinking":"adaptive","maxTokens":49152}',
      );
      expect(result.stderr).toContain(
        '  optimizer (openai-compatible): {"temperature":0.6,"topP":0.95,"topK":20,"maxTokens":49152,"enableThinking":true}',
      );
    } finally {
      directory.remove();
    }
  }, 60_000);
});
