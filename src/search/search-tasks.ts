import { errorMessage } from '../errors.js';
import { Semaphore } from '../model/concurrency.js';
import { searchTask, type SearchContext } from './search-task.js';
import type { TaskSearchResult } from './search-records.js';

export interface SearchTasksOptions extends Omit<SearchContext, 'episodeSlots' | 'judgeSlots'> {
  taskDirs: readonly string[];
  concurrency: { tasks: number; episodes: number; judgments: number };
}

export interface SearchSummary {
  results: TaskSearchResult[];
  /** Tasks whose search stopped on an error (a server that kept failing, a broken task); re-running resumes them. */
  failures: Array<{ taskDir: string; error: string }>;
}

/**
 * Searches several tasks at once: at most `concurrency.tasks` searches, `concurrency.episodes` episodes and
 * `concurrency.judgments` judge calls running together across all of them. A task that fails does not stop the
 * others; its finished steps stay done, so the next run resumes it.
 */
export async function searchTasks(options: SearchTasksOptions): Promise<SearchSummary> {
  const { taskDirs, concurrency, ...shared } = options;
  const context: SearchContext = {
    ...shared,
    episodeSlots: new Semaphore(concurrency.episodes),
    judgeSlots: new Semaphore(concurrency.judgments),
  };
  const taskSlots = new Semaphore(concurrency.tasks);
  type Outcome = { taskDir: string; result: TaskSearchResult } | { taskDir: string; error: string };
  const outcomes = await Promise.all(
    taskDirs.map(async (taskDir): Promise<Outcome> => {
      const release = await taskSlots.acquire();
      try {
        return { taskDir, result: await searchTask(context, taskDir) };
      } catch (error) {
        const message = errorMessage(error);
        context.onProgress?.({ kind: 'task-failed', task: taskDir, error: message });
        return { taskDir, error: message };
      } finally {
        release();
      }
    }),
  );
  return {
    results: outcomes.flatMap((outcome) => ('result' in outcome ? [outcome.result] : [])),
    failures: outcomes.flatMap((outcome) =>
      'error' in outcome ? [{ taskDir: outcome.taskDir, error: outcome.error }] : [],
    ),
  };
}
