import type { StageSpending } from '../../cost/stage-spending.js';
import type { Semaphore } from '../../model/concurrency.js';
import type { ExecutorEndpoint, RoleModel } from '../../model/role-endpoint.js';
import type { EpisodeBackend } from '../../queue/episode-backend.js';
import type { TokenCounter } from '../../model/token-counter.js';
import type { Run } from '../../store/run-store.js';
import type { LoadedTask } from '../../tasks/load-task.js';
import type { TeamDesign } from '../../workflow/workflow.js';
import type { DistillSettings } from './distill-settings.js';
import type { DistillProgressEvent } from '../../records/generation-records.js';
import type { WorkGate } from './work-gate.js';
import { SINGLE_AGENT_FOLDER } from '../../store/run-paths.js';

/** What every stage of one generation shares. */
export interface GenerationContext {
  run: Run<unknown>;
  generation: string;
  executor: ExecutorEndpoint;
  /** The evaluator role: the generation's own model, judging pairs of its workspaces; each call journaled. */
  judge: RoleModel;
  /**
   * The stage `distill` under the generation's label: each collection episode and judgment is checked against the
   * budgets before it starts, and what it spent is journaled.
   */
  spending: StageSpending;
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
  /**
   * The single-agent condition: the task run without the `agent` tool, its team design and the teacher directive;
   * `base` is then `distill/<generation>/<task>/single-agent`.
   */
  singleAgent?: boolean;
}

/** The same task in the single-agent condition: its own step keys, folder and episode ids. */
export function singleAgentTask(task: GenerationTask): GenerationTask {
  return { ...task, base: `${task.base}/${SINGLE_AGENT_FOLDER}`, singleAgent: true };
}

/** The task as progress events name it: `<task> (single-agent)` for the single-agent condition. */
export function progressLabel(task: GenerationTask): string {
  return task.singleAgent ? `${task.id} (${SINGLE_AGENT_FOLDER})` : task.id;
}
