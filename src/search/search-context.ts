import type { DataSeeds } from '../config/data-seeds.js';
import type { JudgeOrders } from '../config/judge-orders.js';
import type { EpisodeSettings } from '../episode/episode-settings.js';
import type { BundleBudget } from '../judge/bundle.js';
import type { Semaphore } from '../model/concurrency.js';
import type { ExecutorEndpoint, RoleModel } from '../model/role-endpoint.js';
import type { TokenCounter } from '../model/token-counter.js';
import type { EpisodeBackend } from '../queue/episode-backend.js';
import type { Run } from '../store/run-store.js';
import type { ChampionRule } from './champion.js';
import type { OutageSettings } from '../config/fault-tolerance.js';
import type { OutageGate } from './outage-gate.js';
import type { SearchProgressEvent } from './search-progress.js';
import type { SearchSpending } from './search-spending.js';
import type { Stabiliser } from './stabiliser.js';

export interface SearchSettings {
  /** Optimizer iterations after v0 (the paper: 11, giving v0..v11). */
  iterations: number;
  championRule: ChampionRule;
  judgeMode: JudgeOrders;
  judgeRepairAttempts: number;
  optimizerRepairAttempts: number;
  stabiliser?: Stabiliser;
  /**
   * Reruns of the bare reference and of each new champion with new sampling seeds, judged beside the search to
   * measure its noise (`search-repeats.ts`); nothing the search decides reads them. Default 0: none.
   */
  repeats?: number;
  /** The sampling seed of every episode of the search (and of the judge's A/B orders). */
  seed: number;
  /** Each task's data seed: every version of a task works on the same data, so the designs are what differs. */
  dataSeeds: DataSeeds;
  episode: EpisodeSettings;
  bundleBudget?: Partial<BundleBudget>;
  /** Tokens of workspace evidence shown to the optimizer (default 8,000). */
  evidenceTokens?: number;
  /** How long the search waits for a model server that stays down, and how often it asks (default 900 s, 5 s). */
  outages?: OutageSettings;
}

/** What every task of one search shares. */
export interface SearchContext {
  run: Run<unknown>;
  /** The generation whose weights play every role (`L0`, `L1`…); part of every step key and episode id. */
  generation: string;
  executor: ExecutorEndpoint;
  judge: RoleModel;
  optimizer: RoleModel;
  settings: SearchSettings;
  tokenCounter: TokenCounter;
  /** Shared by every task of the search: episodes and judge calls running at once. */
  episodeSlots: Semaphore;
  judgeSlots: Semaphore;
  hiddenDirectories?: string[];
  /** Where the episodes run (default: in this process). */
  episodes?: EpisodeBackend;
  /** Shared by every task: work lost while the model server is down waits here and is redone. */
  outages: OutageGate;
  /** Shared by every task: the spending journal and the budgets each episode, judgment and proposal is checked against. */
  spending: SearchSpending;
  onProgress?: (event: SearchProgressEvent) => void;
}
