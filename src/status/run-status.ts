import type { SpendingStatus } from './spending.js';

/**
 * What `mass status` says of a run, as its JSON (`mass status --json`) and the viewer's live section give it. Every
 * figure comes from the run's records; durations are in milliseconds, moments ISO 8601.
 */
export type RunState = 'running' | 'stopped' | 'finished';

/** A kind of step in a group: done, failed and in flight of what is planned (null: the stage records no plan). */
export interface KindCount {
  kind: string;
  done: number;
  failed: number;
  inFlight: number;
  planned: number | null;
}

export interface GroupStatus {
  /** The step key prefix, e.g. `search/L0/demo-potency`. */
  group: string;
  /** The task, `dataset`, or the evaluation's name; null for a training. */
  label: string | null;
  state: 'done' | 'running' | 'stopped' | 'failed' | 'waiting';
  kinds: KindCount[];
  /** Episodes run inside a step (a collection's champion runs): finished of planned. */
  episodes: { done: number; planned: number } | null;
}

export interface StageStatus {
  stage: string;
  generation: string | null;
  /** The evaluation's name for an evaluation; else null. */
  name: string | null;
  state: GroupStatus['state'];
  groups: GroupStatus[];
  eta: Eta;
}

export interface Eta {
  /** Time left; null when nothing measured allows a guess. 0 when the stage has finished. */
  remainingMs: number | null;
  /** What the figure rests on. */
  basis: string;
}

export interface GenerationStatus {
  generation: string;
  /** The latest of its stages that has started (`train`, `search`, `distill`). */
  stage: string;
  state: GroupStatus['state'];
}

export interface InFlightEpisode {
  id: string;
  /** Relative to the run directory; the viewer links it. */
  dir: string;
  where: 'local' | 'worker';
  state: 'running' | 'stopped';
  ageMs: number;
  calls: number;
  promptTokens: number;
  completionTokens: number;
  /** The model call the episode waits on now, if any. */
  currentCall: { seq: number; ageMs: number } | null;
  lastActivityMs: number;
}

export interface InFlightCall {
  /** The step: a judgment, a tournament match, an optimizer's proposal. */
  key: string;
  kind: string;
  state: 'running' | 'stopped';
  ageMs: number;
  attempts: number;
  /**
   * The step's model calls waiting on their answer now (a judgment sends both orders at once), oldest first; empty
   * when it waits on none or its process has stopped.
   */
  modelCalls: InFlightModelCall[];
}

/**
 * A judge's or optimizer's model call in flight. Their clients do not stream, so no token has come back yet: what is
 * known is the prompt's size (`promptChars`, characters of the messages sent) and how long the call has waited.
 */
export interface InFlightModelCall {
  seq: number;
  role: string;
  model: string;
  endpoint: string;
  ageMs: number;
  promptChars: number;
  state: 'waiting';
}

export interface EndpointThroughput {
  /** The model name the calls were made to. */
  model: string;
  calls: number;
  failedCalls: number;
  outputTokens: number;
  callsPerSecond: number;
  outputTokensPerSecond: number;
}

export interface Problem {
  kind: 'outage' | 'failed-step' | 'failed-episode' | 'interrupted-step';
  at: string | null;
  what: string;
  reason: string;
}

export interface RunStatus {
  schemaVersion: 1;
  kind: 'run-status';
  run: {
    name: string;
    directory: string;
    state: RunState;
    /** The process working on the run, when one holds it. */
    holder: { pid: number; hostname: string; command: string | null; since: string } | null;
  };
  readAt: string;
  generations: GenerationStatus[];
  stages: StageStatus[];
  inFlight: { episodes: InFlightEpisode[]; calls: InFlightCall[]; queueJobsOnWorkers: number };
  throughput: { windowMs: number; endpoints: EndpointThroughput[] };
  problems: Problem[];
  eta: Eta & { finishesAt: string | null };
  /** What the run's spending journal holds, and each budget of its configuration beside it; null: neither. */
  spending: SpendingStatus | null;
}
