import type { z } from 'zod';

import type { OutageGate } from '../search/outage-gate.js';
import type { PooledServer } from '../session/endpoint-pools.js';

/**
 * The kinds of work a study emits: an episode of a model, the oracle's grade of one, an external judge's judgment of
 * a pair, a student's training data and its training, a benchmark's trial, its verification and a task's container
 * image. Progress is counted per kind.
 */
export type WorkKind =
  'episode' | 'grade' | 'judgment' | 'training-data' | 'training' | 'trial' | 'verification' | 'image';

/** Slots of one of the session's named pools: `limit` pieces of work of `pool` at a time for `key`. */
export interface WorkSlots {
  /** The pool's name: `episodes`, `judgments`, `grades`… */
  pool: string;
  /** Whose slots: a server address, a judge's name, `local`. */
  key: string;
  limit: number;
}

/** What the runner hands the work when it runs (a finished step is never run again, and is handed nothing). */
interface WorkContext {
  /** 1 on a first attempt; higher when the step is redone after an interruption or a failure. */
  attempt: number;
  /** The outage gate of the work's `server`, to wait out the server's outages; none when the work names none. */
  gate?: OutageGate;
}

/**
 * One piece of a study's work, as a step of the run: `key` (from step-keys.ts) names it, `output` validates what it
 * returns, which is stored and returned as is when a resumed run asks for it again. `prepare` runs inside the step
 * before any slot is taken (reading its inputs); `perform` runs holding the slots.
 */
export interface WorkItem<Schema extends z.ZodType, Prepared = void> {
  kind: WorkKind;
  key: string;
  output: Schema;
  slots?: WorkSlots;
  /** The model server the work calls: its outage gate comes in the context. */
  server?: PooledServer;
  /** The step's folder and files (see StepRunner): cleaned before a redo, the step redone when they are missing. */
  dir?: string;
  keepDirOnRedo?: boolean;
  produces?: readonly string[];
  prepare?: () => Promise<Prepared>;
  perform: (context: WorkContext, prepared: Prepared) => Promise<z.input<Schema>>;
  /** Checks the output, fresh or stored, before it is handed on (throwing refuses it). */
  check?: (output: z.output<Schema>) => void;
}
