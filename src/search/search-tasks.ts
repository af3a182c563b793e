import { outageSettings } from '../config/fault-tolerance.js';
import type { Prices } from '../config/prices.js';
import { BudgetExhaustedError } from '../cost/budget-exhausted.js';
import type { BudgetLimits } from '../cost/budget-guard.js';
import { errorMessage } from '../errors.js';
import { Semaphore } from '../model/concurrency.js';
import { writeGenerationNoise } from './generation-noise.js';
import { OutageBudgetSpentError, outageGateFor, type LostWork, type OutageGate } from './outage-gate.js';
import type { SearchContext } from './search-context.js';
import { SearchSpending } from './search-spending.js';
import { searchTask } from './search-task.js';
import type { TaskSearchResult } from '../records/search-records.js';
import { runFiles } from '../store/run-paths.js';

export interface SearchTasksOptions extends Omit<
  SearchContext,
  'episodeSlots' | 'judgeSlots' | 'outages' | 'spending'
> {
  taskDirs: readonly string[];
  concurrency: { tasks: number; episodes: number; judgments: number };
  /** Default: one asking the executor's server, with the settings' outage budget, recording to `outages.jsonl`. */
  outages?: OutageGate;
  /** The run's `budgets` (`cost`, `tokens`); default none. Spending is journaled either way. */
  budgets?: BudgetLimits;
  /** The executor endpoint's prices: an episode's cost when its provider reported none. */
  executorPrices?: Prices;
}

export interface SearchSummary {
  results: TaskSearchResult[];
  /** Tasks whose search stopped on an error (a server that kept failing, a broken task); re-running resumes them. */
  failures: Array<{ taskDir: string; error: string }>;
  /** Set when the model server stayed down past the outage budget: every search stopped, to be resumed. */
  outage: string | null;
  /** Work lost to outages and redone (or left to redo on resume), as `outages.jsonl` records it. */
  lostToOutages: LostWork[];
}

/**
 * Searches several tasks at once: at most `concurrency.tasks` searches, `concurrency.episodes` episodes and
 * `concurrency.judgments` judge calls running together across all of them. A task that fails does not stop the
 * others; its finished steps stay done, so the next run resumes it.
 */
export async function searchTasks(options: SearchTasksOptions): Promise<SearchSummary> {
  const { taskDirs, concurrency, outages: given, budgets, executorPrices, ...shared } = options;
  const spending = await SearchSpending.open(shared.run, shared.generation, budgets, executorPrices);
  const outages =
    given ??
    outageGateFor(
      shared.executor,
      shared.settings.outages ?? outageSettings({}),
      shared.run.path(runFiles.outages),
    );
  const context: SearchContext = {
    ...shared,
    judge: spending.metered('judge', shared.judge),
    optimizer: spending.metered('optimizer', shared.optimizer),
    spending,
    episodeSlots: new Semaphore(concurrency.episodes),
    judgeSlots: new Semaphore(concurrency.judgments),
    outages,
  };
  let outage: string | null = null;
  let exhausted: BudgetExhaustedError | null = null;
  const taskSlots = new Semaphore(concurrency.tasks);
  type Outcome = { taskDir: string; result: TaskSearchResult } | { taskDir: string; error: string };
  const outcomes = await Promise.all(
    taskDirs.map(async (taskDir): Promise<Outcome> => {
      const release = await taskSlots.acquire();
      try {
        return { taskDir, result: await searchTask(context, taskDir) };
      } catch (error) {
        // A spent budget is not the task's failure: the other tasks stop at their next piece of work, then the search.
        if (error instanceof BudgetExhaustedError) {
          exhausted ??= error;
          return { taskDir, error: errorMessage(error) };
        }
        const message = errorMessage(error);
        if (error instanceof OutageBudgetSpentError) outage = message;
        context.onProgress?.({ kind: 'task-failed', task: taskDir, error: message });
        return { taskDir, error: message };
      } finally {
        release();
      }
    }),
  );
  if (!given) await outages.close();
  if (exhausted) throw exhausted;
  // The tasks' search noise pooled, beside the searches it never touched (docs/search.md, "Search noise: Figure 8").
  if ((shared.settings.repeats ?? 0) > 0) await writeGenerationNoise(shared.run, shared.generation);
  return {
    outage,
    lostToOutages: outages.lost,
    results: outcomes.flatMap((outcome) => ('result' in outcome ? [outcome.result] : [])),
    failures: outcomes.flatMap((outcome) =>
      'error' in outcome ? [{ taskDir: outcome.taskDir, error: outcome.error }] : [],
    ),
  };
}
