import { fileURLToPath } from 'node:url';

import type { FaultPlan } from '../config/fault-plan.js';
import { parseRunConfig, type RunConfig } from '../config/run-config.js';

/** The demo's tasks, shipped with the package. */
export const DEMO_SUITE = fileURLToPath(new URL('../../suites/demo', import.meta.url));

/**
 * The demo's configuration: the built-in toy model in every role, the two demo tasks, and the loop scaled down to fit
 * two generations in a few minutes on two cores (one search iteration, four champion runs per task, a ring of two
 * opponents, two training episodes and one validation episode per task). Everything else is the real pipeline, with
 * the paper's defaults. `faults`: the toy model answers that share of requests with a fault (`mass demo --faults`).
 */
export function demoConfig(name: string, faults?: FaultPlan): RunConfig {
  return parseRunConfig(
    {
      name,
      suite: 'suites/demo',
      model: { kind: 'toy', ...(faults ? { faults } : {}) },
      roles: { executor: { model: 'mass-toy' } },
      budgets: { episodeTimeoutSeconds: 120 },
      concurrency: { episodes: 2, judgments: 4, tasks: 2 },
      search: { iterations: 1 },
      distill: {
        runs: 4,
        needed: 3,
        maxTopUps: 2,
        ringOpponents: 2,
        adaptive: { initialOpponents: 2, rounds: 1, batchSize: 2, window: 2 },
        train: 2,
        validation: 1,
      },
      rsi: { servedAs: 'mass-toy-{generation}' },
      // The demo suite has no test split: the evaluation runs on the demo tasks themselves, two rollouts each, with
      // the toy model standing in as the external judge (an endpoint without an address: the toy serves it).
      evaluation: {
        name: 'demo',
        tasks: ['demo-potency', 'demo-volatility'],
        rollouts: 2,
        judges: [{ model: 'mass-toy-judge', name: 'toy-judge' }],
        judgeSeeds: 2,
        concurrency: { episodes: 2, judgments: 4 },
      },
    },
    'the demo configuration',
  );
}
