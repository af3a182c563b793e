import { join } from 'node:path';

import { UserError } from '../errors.js';
import { TaskSearchRecord } from '../records/search-records.js';
import { RunFiles } from '../store/run-files.js';
import { episodeFiles, runFiles, searchResultPath, searchVersionPath } from '../store/run-paths.js';
import { TeamDesign } from '../workflow/workflow.js';

/** One version of a task's search whose design was recorded: v0 (the task's own) or an optimizer's proposal. */
export interface RecordedDesign {
  version: string;
  /** The search iteration: 0 for v0, k for v<k>. */
  iteration: number;
  design: TeamDesign;
}

/** A task's finished search, as the workflow analysis reads it. */
export interface TaskDesigns {
  task: string;
  /** The task as its team saw it: the prompt of the search's bare reference run. */
  description: string;
  /** Every version with a design, oldest first; a version whose proposal failed has none. */
  designs: RecordedDesign[];
  /** The champion's version, or `reference` when no version beat the bare task. */
  champion: string;
}

export interface GenerationDesigns {
  generation: string;
  tasks: TaskDesigns[];
  /** Searches and designs left out, and why. */
  notes: string[];
}

/** The generations that have search records (`search/<generation>/`). */
export async function searchedGenerations(runDirectory: string): Promise<string[]> {
  return new RunFiles(runDirectory).folders(runFiles.search);
}

/**
 * Every finished search of a generation with its designs, task by task in name order. An unfinished search, a task
 * whose reference prompt is missing and a design that cannot be read are left out and noted. A generation without
 * search records is a `UserError` naming the generations there are.
 */
export async function readGenerationDesigns(
  runDirectory: string,
  generation: string,
): Promise<GenerationDesigns> {
  const files = new RunFiles(runDirectory);
  const generations = await files.folders(runFiles.search);
  if (!generations.includes(generation)) {
    throw new UserError(
      generations.length === 0
        ? `${runDirectory} has no search records (search/<generation>/): run a search first (mass search, mass rsi or mass demo)`
        : `${runDirectory} has no search records for generation ${generation}: give --generation ${generations.join(' or ')}`,
    );
  }
  const tasks: TaskDesigns[] = [];
  for (const task of await files.folders(join(runFiles.search, generation))) {
    const result = await files.record(
      TaskSearchRecord,
      searchResultPath(generation, task),
      'this search has not finished, so it is left out',
    );
    if (!result) continue;
    const description = await files.text(
      join(result.reference.dir, episodeFiles.prompt),
      'the task description is read from the reference run’s prompt, so this task is left out',
    );
    if (description === undefined) continue;
    const designs: RecordedDesign[] = [];
    for (const iteration of result.iterations) {
      const number = /^v(\d+)$/.exec(iteration.version);
      if (!number) continue;
      const design = await files.json(
        TeamDesign,
        searchVersionPath(generation, task, iteration.version, 'workflow'),
      );
      if (design) designs.push({ version: iteration.version, iteration: Number(number[1]), design });
    }
    designs.sort((a, b) => a.iteration - b.iteration);
    tasks.push({ task, description, designs, champion: result.champion });
  }
  return { generation, tasks, notes: files.notes };
}
