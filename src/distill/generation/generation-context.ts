import type { Semaphore } from '../../model/concurrency.js';
import type { ExecutorEndpoint, RoleModel } from '../../model/role-endpoint.js';
import type { EpisodeBackend } from '../../queue/episode-backend.js';
import type { TokenCounter } from '../../model/token-counter.js';
import type { Run } from '../../store/run-store.js';
import type { LoadedTask } from '../../tasks/load-task.js';
import type { TeamDesign } from '../../workflow/workflow.js';
import type { DistillSettings } from './distill-settings.js';
import type { DistillProgressEvent } from './generation-records.js';
import type { WorkGate } from './work-gate.js';

/** What every stage of one generation shares. */
export interface GenerationContext {
  run: Run<unknown>;
  generation: string;
  executor: ExecutorEndpoint;
  /** The evaluator role: the generation's own model, judging pairs of its workspaces. */
  judge: RoleModel;
  settings: DistillSettings;
  tokenCounter: TokenCounter;
  /** Hidden from the agents: the run directory always, and whatever the caller adds. */
  hiddenDirectories: string[];
  /** Judge calls at once, over every task. */
  judgeSlots: Semaphore;
  gate: WorkGate;
  /** Where the collection's episodes run (default: in this process). */
  episodes?: EpisodeBackend;
  signal?: AbortSignal;
  progress: (event: DistillProgressEvent) => void;
}

/** A task of the generation, loaded once. */
export interface GenerationTask {
  task: LoadedTask;
  id: string;
  championWorkflow: TeamDesign;
  /** `distill/<generation>/<task>`: the prefix of its step keys and its folder in the run directory. */
  base: string;
}
