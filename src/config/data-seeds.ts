import { UserError } from '../errors.js';
import type { RunConfig } from './run-config.js';

/**
 * The data seeds of a run: each task's workspace data is drawn once from its seed and is the same in every episode of
 * the run (search versions, champion runs, top-ups, evaluation rollouts), so that runs of a task differ by their
 * sampling alone and a comparison never ranks data luck.
 */
export interface DataSeeds {
  /** The data seed of a task that has none of its own. */
  seed: number;
  /** Task id → its own data seed. */
  tasks: Readonly<Record<string, number>>;
}

export function dataSeeds(config: RunConfig): DataSeeds {
  return { seed: config.dataSeed ?? config.seed, tasks: config.taskDataSeeds ?? {} };
}

export function taskDataSeed(seeds: DataSeeds, taskId: string): number {
  return seeds.tasks[taskId] ?? seeds.seed;
}

/** A data seed given for a task the suite does not have is a typo that would silently leave that task's seed unset. */
export function assertDataSeedTasks(
  seeds: DataSeeds,
  suite: { dir: string; tasks: ReadonlyArray<{ manifest: { id: string } }> },
): void {
  const known = suite.tasks.map((task) => task.manifest.id);
  const unknown = Object.keys(seeds.tasks).filter((id) => !known.includes(id));
  if (unknown.length > 0) {
    throw new UserError(
      `taskDataSeeds: ${unknown.join(', ')} ${unknown.length === 1 ? 'is' : 'are'} not in suite ${suite.dir}. Its tasks: ${known.join(', ')}`,
    );
  }
}
