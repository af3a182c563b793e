import { runEpisode, type EpisodeOptions, type EpisodeResult } from '../episode/run-episode.js';

/** One episode asked of a back-end: what `runEpisode` takes, and the step that asks for it. */
export interface EpisodeRequest {
  /** The run step this episode belongs to (`search/L0/<task>/v3/episode`): with the run, it names the job. */
  stepKey: string;
  options: EpisodeOptions;
  /**
   * The environment variable holding `options.apiKey`. A queue sends this name to its workers, never the key: each
   * worker reads the key from its own environment.
   */
  apiKeyEnv?: string;
}

/**
 * Where episodes run. Search (and later collection and evaluation) ask a back-end for episodes and do not know whether
 * they run in this process or on other machines. A failed episode is a result (its record says why); a back-end
 * throws only when the episode could not be run at all.
 */
export interface EpisodeBackend {
  readonly kind: 'local' | 'queue';
  run(request: EpisodeRequest): Promise<EpisodeResult>;
  close(): Promise<void>;
}

/** Today's way: the episode runs in this process, in its own sandbox. Callers bound how many run at once. */
export const localEpisodeBackend: EpisodeBackend = {
  kind: 'local',
  run: (request) => runEpisode(request.options),
  close: async () => {},
};
