import { dataSeeds, type DataSeeds } from '../../config/data-seeds.js';
import { outageSettings } from '../../config/fault-tolerance.js';
import type { Prices } from '../../config/prices.js';
import type { RunConfig } from '../../config/run-config.js';
import type { BudgetLimits } from '../../cost/budget-guard.js';
import { episodeSettings, type EpisodeSettings } from '../../episode/episode-settings.js';
import type { BundleBudget } from '../../judge/bundle.js';
import type { JudgeOrders } from '../../config/judge-orders.js';
import type { OutageSettings } from '../../config/fault-tolerance.js';
import type { WindowLimits } from '../pack-windows.js';

export type ScheduleKind = 'ring' | 'round-robin' | 'adaptive';

/** The adaptive schedule: a ring first, then rounds of the pairs whose order across the selection cut is least sure. */
export interface AdaptiveRounds {
  /** Opponents per episode in the ring played first. */
  initialOpponents: number;
  /** Rounds after the ring at most; fewer when every pair across the cut is settled. */
  rounds: number;
  batchSize: number;
  /** Players considered on each side of the cut. */
  window: number;
  /** A pair is judged at most this many times. */
  maxMeetings: number;
}

/** Everything of one generation's outer loop that is not a model or a path (MASS.md §4). */
export interface DistillSettings {
  collection: {
    /** Champion runs per task (the paper: 18). */
    runs: number;
    /** Successful runs selection needs (16); fewer start bounded top-ups. */
    needed: number;
    maxTopUps: number;
    /**
     * Also run each champion task single-agent (the `agent` tool removed, no team design, no teacher directive), ranked
     * and selected the same way, under `<task>/single-agent/`; the generation's training data stays the team's.
     */
    singleAgent?: boolean;
  };
  schedule: {
    kind: ScheduleKind;
    /** Opponents per episode in the ring (6: 54 pairs for 18 episodes). */
    ringOpponents: number;
    adaptive: AdaptiveRounds;
  };
  judge: {
    mode: JudgeOrders;
    repairAttempts: number;
    bundleBudget?: Partial<BundleBudget>;
  };
  /** Bradley–Terry prior: virtual wins and losses against a mean player (0.5). */
  prior: number;
  /** Ranks 1..train train, the next `validation` ranks validate (15 and 1). */
  selection: { train: number; validation: number };
  windows: Pick<WindowLimits, 'windowTokens' | 'maxContextTokens'>;
  /** Run i of a task samples with seed `seed + i`; the schedules and the judge's A/B orders draw from it too. */
  seed: number;
  /** Each task's data seed: every champion run and top-up of a task works on the same data. */
  dataSeeds: DataSeeds;
  concurrency: {
    /** Episodes of one task at once (tasks are collected one after another). */
    episodes: number;
    /** Judge calls at once, over every task. */
    judgments: number;
  };
  episode: EpisodeSettings;
  /** How long collection waits out a model server that is down before the command stops (exit 3). */
  outages: OutageSettings;
  /** `budgets.cost` and `budgets.tokens`: the collection's episodes and the tournament's judgments stop at them. */
  budgets?: BudgetLimits;
  /** The executor's prices, for the cost of episodes whose provider reported none. */
  executorPrices?: Prices;
}

/** The outer loop's settings as the run configuration gives them. */
export function distillSettings(config: RunConfig): DistillSettings {
  const { distill } = config;
  return {
    collection: {
      runs: distill.runs,
      needed: distill.needed,
      maxTopUps: distill.maxTopUps,
      singleAgent: distill.singleAgentCollection,
    },
    schedule: {
      kind: distill.schedule,
      ringOpponents: distill.ringOpponents,
      adaptive: { ...distill.adaptive },
    },
    judge: {
      mode: distill.judgeMode,
      repairAttempts: distill.judgeRepairAttempts,
      bundleBudget: { totalTokens: config.budgets.judgeBundleTokens },
    },
    prior: distill.prior,
    selection: { train: distill.train, validation: distill.validation },
    windows: { windowTokens: distill.windowTokens, maxContextTokens: distill.maxContextTokens },
    seed: config.seed,
    dataSeeds: dataSeeds(config),
    outages: outageSettings(config),
    concurrency: { episodes: config.concurrency.episodes, judgments: config.concurrency.judgments },
    episode: episodeSettings(config),
    budgets: { cost: config.budgets.cost, tokens: config.budgets.tokens },
    executorPrices: config.roles.executor.prices,
  };
}
