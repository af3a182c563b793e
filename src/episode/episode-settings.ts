import { faultTolerance, type FaultTolerance } from '../config/fault-tolerance.js';
import type { RunConfig } from '../config/run-config.js';
import type { UpstreamRetryPolicy } from '../proxy/upstream-retry.js';
import { durationMs } from '../timer-duration.js';
import type { EpisodeSpec } from './episode-spec.js';

/** What every episode of a run shares: limits, sampling and sandbox; each stage adds task, design, seed and folder. */
export type EpisodeSettings = Pick<
  EpisodeSpec,
  | 'timeoutSeconds'
  | 'maxOutputTokens'
  | 'outputBudget'
  | 'sampling'
  | 'contextWindowSize'
  | 'sandbox'
  | 'sandboxHide'
  | 'privateDestinations'
  | 'gpus'
  | 'harnessProfile'
  | 'images'
  | 'cpuSeconds'
  | 'memoryBytes'
  | 'processLimit'
  | 'diskBytes'
  | 'retry'
>;

/** The executor's sampling: its own block (`roles.executor.sampling`) over the run's shared settings. */
export function episodeSettings(config: RunConfig): EpisodeSettings {
  const { budgets, sampling } = config;
  const own = config.roles.executor.sampling ?? {};
  return {
    timeoutSeconds: budgets.episodeTimeoutSeconds,
    maxOutputTokens: budgets.maxOutputTokensPerCall,
    outputBudget: budgets.episodeOutputBudget,
    cpuSeconds: budgets.episodeCpuSeconds,
    processLimit: budgets.episodeProcesses,
    diskBytes: budgets.episodeDiskGiB === undefined ? undefined : budgets.episodeDiskGiB * 1024 ** 3,
    contextWindowSize: budgets.contextWindowSize,
    sampling: {
      temperature: own.temperature ?? sampling.temperature,
      topP: own.topP ?? sampling.topP,
      topK: own.topK ?? sampling.topK,
      enableThinking: own.enableThinking ?? sampling.enableThinking,
    },
    sandbox: config.sandbox,
    sandboxHide: config.sandboxHide,
    ...(config.network?.privateDestinations.length
      ? { privateDestinations: config.network.privateDestinations }
      : {}),
    ...(config.sandboxGpus === undefined ? {} : { gpus: config.sandboxGpus }),
    harnessProfile: config.harnessProfile,
    ...(config.roles.executor.images ? { images: true } : {}),
    retry: upstreamRetryPolicy(faultTolerance(config)),
  };
}

/** The episode proxy's retry policy from the configuration's `faultTolerance` section. */
export function upstreamRetryPolicy(settings: FaultTolerance): UpstreamRetryPolicy {
  return {
    maxAttempts: settings.callAttempts,
    maxTotalMs: durationMs(settings.callSeconds, 's'),
    initialDelayMs: settings.initialDelayMs,
    maxDelayMs: settings.maxDelayMs,
    responseHeadTimeoutMs: durationMs(settings.responseHeadTimeoutSeconds, 's'),
  };
}
