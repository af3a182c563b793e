import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { evaluationConfig, parseRunConfig } from '../../src/config/run-config.js';
import { DEMO_SUITE } from '../../src/demo/demo-config.js';
import { evaluationPlan } from '../../src/evaluate/evaluation-plan.js';
import { qwenSettings } from '../../src/harness/qwen-settings.js';
import { loadSuite } from '../../src/tasks/load-suite.js';
import { ModelRegistry } from '../../src/records/registry.js';
import { temporaryDirectory } from '../support/fixtures.js';

const directory = temporaryDirectory();
let registry: ModelRegistry;

beforeAll(async () => {
  registry = await ModelRegistry.open(directory.path);
  await registry.addBase({ model: 'org/base', servedAs: 'base' });
  for (const [name, parent] of [
    ['L1', 'L0'],
    ['L2', 'L1'],
  ] as const) {
    await registry.add({ name, parent, mergedPath: directory.path, datasetId: 'd', servedAs: `run-${name}` });
  }
});
afterAll(() => directory.remove());

const config = (evaluation: Record<string, unknown> = {}) =>
  parseRunConfig(
    {
      name: 'plan',
      suite: DEMO_SUITE,
      roles: { executor: { baseUrl: 'http://127.0.0.1:9/v1', model: 'base' } },
      evaluation,
    },
    'test',
  );

describe('what an evaluation compares', () => {
  it('by default: every generation on the executor’s server, each against L0 and against its parent', async () => {
    const run = config({ tasks: ['demo-potency'] });
    const plan = await evaluationPlan({
      config: run,
      evaluation: evaluationConfig(run),
      registry,
      suite: await loadSuite(DEMO_SUITE),
    });
    expect(plan.models.map((model) => [model.name, model.endpoint.model, model.parent])).toEqual([
      ['L0', 'base', null],
      ['L1', 'run-L1', 'L0'],
      ['L2', 'run-L2', 'L1'],
    ]);
    expect(plan.comparisons).toEqual([
      { candidate: 'L1', baseline: 'L0' },
      { candidate: 'L2', baseline: 'L0' },
      { candidate: 'L2', baseline: 'L1' },
    ]);
    expect(evaluationConfig(run)).toMatchObject({
      rollouts: 10,
      judgeSeeds: 3,
      conditions: ['bare'],
      oracleTieMargin: 2,
      tournamentSample: 20,
    });
  });

  it('named endpoints instead of generations; unknown models, tasks and a suite without a test split refused', async () => {
    const named = config({
      tasks: ['demo-volatility'],
      models: [
        { name: 'base', endpoint: { baseUrl: 'http://a:1/v1', model: 'm1' } },
        { name: 'tuned', endpoint: { baseUrl: 'http://b:1/v1', model: 'm2' } },
      ],
    });
    const plan = await evaluationPlan({
      config: named,
      evaluation: evaluationConfig(named),
      registry,
      suite: await loadSuite(DEMO_SUITE),
    });
    expect(plan.comparisons).toEqual([{ candidate: 'tuned', baseline: 'base' }]);
    expect(plan.models[1]!.endpoint.baseUrl).toBe('http://b:1/v1');

    const attempt = async (evaluation: Record<string, unknown>) => {
      const run = config(evaluation);
      return evaluationPlan({
        config: run,
        evaluation: evaluationConfig(run),
        registry,
        suite: await loadSuite(DEMO_SUITE),
      });
    };
    await expect(attempt({ tasks: ['demo-potency'], generations: ['L7'] })).rejects.toThrow(
      /no generation L7; registered: L0, L1, L2/,
    );
    await expect(
      attempt({ tasks: ['demo-potency'], comparisons: [{ candidate: 'L3', baseline: 'L0' }] }),
    ).rejects.toThrow(/"L3" is not a model of this evaluation/);
    await expect(attempt({ tasks: ['nope'] })).rejects.toThrow(/nope is not in suite/);
    await expect(attempt({})).rejects.toThrow(/has no test tasks: name the tasks/);
    await expect(
      attempt({ tasks: ['demo-potency'], judges: [{ baseUrl: 'http://x:1/v1', model: 'oracle' }] }),
    ).rejects.toThrow(/"oracle" names a figure of its own/);
  });

  it('comparisons: [] with a workflow transfer: no generation comparison, no test split, only the executors served', async () => {
    const attempt = async (evaluation: Record<string, unknown>) => {
      const run = config(evaluation);
      return evaluationPlan({
        config: run,
        evaluation: evaluationConfig(run),
        registry,
        suite: await loadSuite(DEMO_SUITE),
      });
    };
    const transferOnly = await attempt({
      comparisons: [],
      transfer: [{ executor: 'L1', designsFrom: 'L2' }],
    });
    expect(transferOnly.comparisons).toEqual([]);
    expect(transferOnly.tasks).toEqual([]);
    expect(transferOnly.models.map((model) => model.name)).toEqual(['L1']);
    // Beside the generation comparisons, the transfer changes nothing of theirs.
    const beside = await attempt({
      tasks: ['demo-potency'],
      transfer: [{ executor: 'L0', designsFrom: 'L1' }],
    });
    expect(beside.comparisons).toHaveLength(3);
    expect(beside.tasks.map((task) => task.manifest.id)).toEqual(['demo-potency']);
    await expect(attempt({ comparisons: [] })).rejects.toThrow(/nothing to compare.*evaluation\.transfer/);
    await expect(attempt({ transfer: [{ executor: 'L0', designsFrom: 'L1' }] })).rejects.toThrow(
      /has no test tasks.*comparisons: \[\] for a workflow transfer alone/,
    );
  });

  it('the single-agent condition: the harness does not register the agent tool', () => {
    const settings = (disabledTools?: string[]) =>
      qwenSettings({
        model: 'm',
        baseUrl: 'http://x/v1',
        apiKeyEnv: 'K',
        sampling: { temperature: 0.6, topP: 0.95, topK: 20, seed: 1, maxTokens: 10, enableThinking: true },
        requestTimeoutMs: 1000,
        contextWindowSize: 1000,
        shellTimeoutMs: 1000,
        ...(disabledTools ? { disabledTools } : {}),
      }) as { tools: { disabled?: string[] } };
    expect(settings(['agent']).tools.disabled).toEqual(['agent']);
    expect(settings().tools.disabled).toBeUndefined();
  });
});
