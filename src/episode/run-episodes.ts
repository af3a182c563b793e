import { BudgetExhaustedError } from '../cost/budget-exhausted.js';
import { Semaphore } from '../model/concurrency.js';
import { runEpisode, type EpisodeOptions, type EpisodeResult } from './run-episode.js';

export type EpisodeOutcome =
  { ok: true; result: EpisodeResult } | { ok: false; error: Error; options: EpisodeOptions };

/**
 * Runs many episodes, at most `concurrency` at once, in the order given. An episode that throws (a bad task, a full
 * disk) does not stop the others: every outcome is returned, in input order. A spent budget is no episode's failure:
 * an episode refused by one (`BudgetExhaustedError`) is not reported, and once every episode has settled (those
 * already running finish, those not started are refused too) the first such error is thrown, to stop the command.
 */
export async function runEpisodes(
  episodes: EpisodeOptions[],
  options: {
    concurrency: number;
    onFinished?: (outcome: EpisodeOutcome, index: number) => void;
    /** Runs one episode (default `runEpisode`, here); an episode back-end's, to run them elsewhere. */
    run?: (episode: EpisodeOptions) => Promise<EpisodeResult>;
  },
): Promise<EpisodeOutcome[]> {
  const slots = new Semaphore(options.concurrency);
  const outcomes = await Promise.all(
    episodes.map(async (episode, index) => {
      const release = await slots.acquire();
      let outcome: EpisodeOutcome;
      try {
        outcome = { ok: true, result: await (options.run ?? runEpisode)(episode) };
      } catch (error) {
        outcome = {
          ok: false,
          error: error instanceof Error ? error : new Error(String(error)),
          options: episode,
        };
      } finally {
        release();
      }
      if (outcome.ok || !(outcome.error instanceof BudgetExhaustedError))
        options.onFinished?.(outcome, index);
      return outcome;
    }),
  );
  const refused = outcomes.find((outcome) => !outcome.ok && outcome.error instanceof BudgetExhaustedError);
  if (refused && !refused.ok) throw refused.error;
  return outcomes;
}
