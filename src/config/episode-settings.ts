import type { EpisodeOptions } from '../episode/run-episode.js';
import type { RunConfig } from './run-config.js';

/** What every episode of a run shares: limits, sampling and sandbox; each stage adds task, design, seed and folder. */
export type EpisodeSettings = Pick<
  EpisodeOptions,
  | 'timeoutSeconds'
  | 'maxOutputTokens'
  | 'outputBudget'
  | 'sampling'
  | 'contextWindowSize'
  | 'sandbox'
  | 'cpuSeconds'
  | 'memoryBytes'
>;

export function episodeSettings(config: RunConfig): EpisodeSettings {
  const { budgets, sampling } = config;
  return {
    timeoutSeconds: budgets.episodeTimeoutSeconds,
    maxOutputTokens: budgets.maxOutputTokensPerCall,
    outputBudget: budgets.episodeOutputBudget,
    contextWindowSize: budgets.contextWindowSize,
    sampling: {
      temperature: sampling.temperature,
      topP: sampling.topP,
      topK: sampling.topK,
      enableThinking: sampling.enableThinking,
    },
    sandbox: config.sandbox,
  };
}
