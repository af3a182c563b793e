import { describe, expect, it } from 'vitest';

import { parseRunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { serveEvaluation } from '../../src/evaluate/serve-evaluation.js';
import { modelKind } from '../../src/hosting/model-kind.js';

describe('serving an evaluation’s judges', () => {
  it('gives each judge the settings its own provider accepts, not the executor’s vLLM settings', async () => {
    const config = parseRunConfig(
      {
        name: 'judges',
        suite: DEMO_SUITE,
        roles: { executor: { baseUrl: 'http://127.0.0.1:9/v1', model: 'base' } },
        evaluation: {
          judges: [
            {
              name: 'claude',
              provider: 'anthropic',
              model: 'claude-test',
              sampling: { thinking: { budgetTokens: 2048 } },
            },
            { name: 'vllm', baseUrl: 'http://127.0.0.1:9/v1', model: 'big' },
          ],
        },
      },
      'test',
    );
    const judges = config.evaluation!.judges.map(({ name, ...endpoint }) => ({
      name: name!,
      endpoint,
    }));
    const served = await serveEvaluation(config, modelKind(config).host, [], judges, { selfJudge: false });
    try {
      const [claude, vllm] = served.judges;
      expect(claude!.sampling).toEqual({
        maxTokens: config.budgets.judgeMaxTokens,
        thinking: { budgetTokens: 2048 },
      });
      expect(vllm!.sampling).toMatchObject({ topK: 20, enableThinking: true });
    } finally {
      await served.close();
    }
  });
});
