import { fileURLToPath } from 'node:url';

import type { RunConfig } from '../config/run-config.js';

/** The demo's tasks, shipped with the package. */
export const DEMO_SUITE = fileURLToPath(new URL('../../suites/demo', import.meta.url));

/**
 * The demo's configuration: the built-in toy model in every role, the two demo tasks, and the loop scaled down to fit
 * two generations in a few minutes on two cores (one search iteration, four champion runs per task, a ring of two
 * opponents, two training episodes and one validation episode per task). Everything else is the real pipeline.
 */
export function demoConfig(name: string): RunConfig {
  return {
    name,
    suite: 'suites/demo',
    roles: { executor: { provider: 'toy', model: 'mass-toy', maxConcurrency: 64 } },
    sampling: { temperature: 0.6, topP: 0.95, topK: 20, enableThinking: true },
    budgets: {
      episodeTimeoutSeconds: 120,
      maxOutputTokensPerCall: 32_768,
      judgeMaxTokens: 49_152,
      optimizerMaxTokens: 49_152,
      contextWindowSize: 262_144,
      judgeBundleTokens: 32_000,
      optimizerEvidenceTokens: 8_000,
    },
    concurrency: { episodes: 2, judgments: 4, tasks: 2 },
    seed: 0,
    search: {
      iterations: 1,
      championRule: 'paper',
      judgeMode: 'random',
      judgeRepairAttempts: 2,
      optimizerRepairAttempts: 2,
    },
    sandbox: 'bubblewrap',
    harnessProfile: 'lean',
    distill: {
      runs: 4,
      needed: 3,
      maxTopUps: 2,
      schedule: 'ring',
      ringOpponents: 2,
      adaptive: { initialOpponents: 2, rounds: 1, batchSize: 2, window: 2, maxMeetings: 2 },
      judgeMode: 'random',
      judgeRepairAttempts: 2,
      prior: 0.5,
      train: 2,
      validation: 1,
      windowTokens: 49_152,
      maxContextTokens: 8_192,
    },
    rsi: { trainer: { kind: 'toy' }, deploy: { kind: 'toy' }, servedAs: 'mass-toy-{generation}' },
    // The demo suite has no test split: the evaluation runs on the demo tasks themselves, two rollouts each, with
    // the toy model standing in as the external judge.
    evaluation: {
      name: 'demo',
      tasks: ['demo-potency', 'demo-volatility'],
      conditions: ['bare'],
      rollouts: 2,
      judges: [{ provider: 'toy', model: 'mass-toy-judge', name: 'toy-judge', maxConcurrency: 64 }],
      judgeSeeds: 2,
      selfJudge: true,
      judgeRepairAttempts: 2,
      oracleTieMargin: 2,
      tournamentSample: 20,
      concurrency: { episodes: 2, judgments: 4 },
    },
  };
}
