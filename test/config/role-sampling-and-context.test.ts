import { afterEach, beforeAll, describe, expect, it } from 'vitest';

import { harnessWindow } from '../../src/harness/context-window.js';
import { fitServedContext } from '../../src/session/context-fit.js';
import { episodeSettings } from '../../src/episode/episode-settings.js';
import { parseRunConfig, roleEndpoints, type RunConfig } from '../../src/config/run-config.js';
import { endpointSemaphore } from '../../src/model/concurrency.js';
import { loadTokenCounter, type TokenCounter } from '../../src/model/token-counter.js';
import { searchRoles, searchSettings } from '../../src/search/search-config.js';
import { loadTask, type LoadedTask } from '../../src/tasks/load-task.js';
import { startScriptedServer, type ScriptedServer } from '../../src/testing/scripted-server.js';
import { distillSettings } from '../../src/distill/generation/distill-settings.js';

const servers: ScriptedServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

let tasks: LoadedTask[];
let counter: TokenCounter;
beforeAll(async () => {
  tasks = [await loadTask('suites/research-12/finance-min-variance')];
  counter = await loadTokenCounter();
});

const base = (roles: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  parseRunConfig({ name: 'r', suite: 'suites/research-12', roles, ...extra }, 'config.yaml');
const qwen = { baseUrl: 'http://127.0.0.1:8000/v1', model: 'Qwen/Qwen3.6-27B' };

describe('a sampling block per role', () => {
  it('gives each role what its provider accepts: Qwen’s set on vLLM, only its own block elsewhere', () => {
    const config = base({
      executor: { ...qwen, sampling: { temperature: 0.7 } },
      judge: {
        provider: 'anthropic',
        model: 'claude-judge',
        apiKeyEnv: 'MASS_TEST_ANTHROPIC_KEY',
        sampling: { thinking: { budgetTokens: 16_000 } },
      },
      optimizer: {
        provider: 'openai',
        model: 'gpt-optimizer',
        apiKeyEnv: 'MASS_TEST_OPENAI_KEY',
        sampling: { reasoningEffort: 'high' },
      },
    });
    process.env.MASS_TEST_ANTHROPIC_KEY = 'a';
    process.env.MASS_TEST_OPENAI_KEY = 'o';
    const roles = searchRoles(config);
    expect(episodeSettings(config).sampling).toEqual({
      temperature: 0.7,
      topP: 0.95,
      topK: 20,
      enableThinking: true,
    });
    expect(roles.judge.sampling).toEqual({ thinking: { budgetTokens: 16_000 }, maxTokens: 49_152 });
    expect(roles.optimizer.sampling).toEqual({ reasoningEffort: 'high', maxTokens: 49_152 });
    expect(roles.optimizer.model.endpoint).toBe('openai https://api.openai.com/v1');
  });

  it('keeps a role’s block to that role: a judge playing the executor’s model takes the shared settings', () => {
    const config = base({ executor: { ...qwen, sampling: { temperature: 1.0, topK: 40 } } });
    expect(roleEndpoints(config).judge.sampling).toEqual({ temperature: 1.0, topK: 40 });
    expect(searchRoles(config).judge.sampling).toEqual({
      temperature: 0.6,
      topP: 0.95,
      topK: 20,
      maxTokens: 49_152,
      enableThinking: true,
    });
  });

  it('refuses settings a role’s provider would refuse, naming the role', () => {
    const refused = () =>
      base({
        executor: qwen,
        judge: {
          provider: 'anthropic',
          model: 'c',
          sampling: { temperature: 0.6, thinking: { budgetTokens: 60_000 } },
        },
        optimizer: {
          provider: 'openai-compatible',
          baseUrl: 'https://api.openai.com/v1',
          model: 'g',
          sampling: { topK: 20 },
        },
      });
    expect(refused).toThrow(/roles\.judge\.sampling: Anthropic's Messages API does not accept temperature/);
    expect(refused).toThrow(
      /roles\.judge\.sampling: the thinking budget \(60000\) must be below the output bound max_tokens \(49152\)/,
    );
    expect(refused).toThrow(/roles\.optimizer\.sampling: OpenAI's chat API does not accept topK/);
    const efforts = () =>
      base({
        executor: { ...qwen, sampling: { reasoningEffort: 'high' } },
        judge: { provider: 'anthropic', model: 'c', sampling: { reasoningEffort: 'minimal' } },
      });
    expect(efforts).toThrow(
      /roles\.executor\.sampling: the executor's harness \(qwen-code\) is given temperature/,
    );
    expect(efforts).toThrow(
      /roles\.judge\.sampling: Anthropic's Messages API takes the effort low, .*not minimal/,
    );
    expect(() => base({ executor: { provider: 'anthropic', model: 'c' } })).toThrow(
      /roles\.executor\.provider: the team runs in qwen-code and is the model trained/,
    );
    expect(() => base({ executor: { baseUrl: 'https://api.openai.com/v1', model: 'g' } })).toThrow(
      /roles\.executor\.provider/,
    );
  });

  it('takes the judge’s bundle and the optimizer’s evidence budgets from the configuration', () => {
    const config = base(
      { executor: qwen },
      { budgets: { judgeBundleTokens: 20_000, optimizerEvidenceTokens: 4_000 } },
    );
    expect(searchSettings(config)).toMatchObject({
      bundleBudget: { totalTokens: 20_000 },
      evidenceTokens: 4_000,
    });
    expect(distillSettings(config).judge.bundleBudget).toEqual({ totalTokens: 20_000 });
    expect(base({ executor: qwen }).budgets).toMatchObject({
      judgeBundleTokens: 32_000,
      optimizerEvidenceTokens: 8_000,
    });
  });
});

describe('the served context', () => {
  async function vllm(maxModelLength?: number): Promise<ScriptedServer> {
    const server = await startScriptedServer({ models: [qwen.model], maxModelLength });
    servers.push(server);
    return server;
  }
  const fit = (config: RunConfig) =>
    fitServedContext({ config, endpoints: roleEndpoints(config), tasks, tokenCounter: counter });

  it('lowers the harness’s context to what vLLM serves, leaving one call’s output beyond compaction', async () => {
    const server = await vllm(131_072);
    const config = base({ executor: { ...qwen, baseUrl: server.baseUrl } });
    const fitted = await fit(config);
    expect(fitted.roles.executor).toEqual({ tokens: 131_072, source: 'served', served: 131_072 });
    // Compaction at 85 % of 115,651 leaves 32,768 output tokens within 131,072.
    expect(fitted.harnessContextWindow).toBe(115_651);
    expect(Math.ceil(0.85 * 115_651) + 32_768).toBeLessThanOrEqual(131_072);
    expect(searchSettings(fitted.config).episode.contextWindowSize).toBe(115_651);
    expect(config.budgets.contextWindowSize).toBe(262_144);
  });

  it('reads the listing without setting the endpoint’s concurrency limit (the first client’s wins)', async () => {
    const server = await vllm(131_072);
    await fit(base({ executor: { ...qwen, baseUrl: server.baseUrl, maxConcurrency: 3 } }));
    expect(endpointSemaphore(server.baseUrl, 64).limit).toBe(3);
  });

  it('keeps the configured context where the server lists none', async () => {
    const server = await vllm();
    const fitted = await fit(base({ executor: { ...qwen, baseUrl: server.baseUrl } }));
    expect(fitted.roles.judge).toEqual({ tokens: 262_144, source: 'configured', served: null });
    expect(fitted.harnessContextWindow).toBe(262_144);
  });

  it('refuses budgets the served context cannot hold, naming them and what would fit', async () => {
    const server = await vllm(65_536);
    const failure = fit(base({ executor: { ...qwen, baseUrl: server.baseUrl } }));
    await expect(failure).rejects.toThrow(
      /judge, task finance-min-variance: its prompt \(\d+ tokens\), two bundles of budgets\.judgeBundleTokens 32000 and budgets\.judgeMaxTokens 49152 need \d+ tokens, but the judge's server lists max_model_len 65536: set judgeBundleTokens to at most \d+/,
    );
    const tight = base(
      { executor: { ...qwen, baseUrl: server.baseUrl } },
      {
        budgets: {
          maxOutputTokensPerCall: 60_000,
          judgeBundleTokens: 4_000,
          judgeMaxTokens: 16_000,
          optimizerMaxTokens: 70_000,
        },
      },
    );
    const problems = fit(tight);
    await expect(problems).rejects.toThrow(/executor: .*set maxOutputTokensPerCall to at most 49152/);
    await expect(problems).rejects.toThrow(
      /optimizer, task finance-min-variance: .*lower optimizerMaxTokens/,
    );
    await expect(problems).rejects.not.toThrow(/judge, task/);
  });

  it('the harness’s context never exceeds the served one', () => {
    expect(harnessWindow(262_144, 32_768)).toBe(262_144);
    expect(harnessWindow(40_000, 32_768)).toBe(8_508);
  });
});
