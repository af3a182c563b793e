import type { HarnessTexts } from '../harness/harness-texts.js';
import { qwenCodeCommand, type captureQwenCodeOutput } from '../harness/launch-qwen-code.js';
import { episodeTimeoutSeconds, type EpisodeEnvironment } from './episode-environment.js';
import type { PreparedEpisode } from './episode-prepare.js';
import type { EpisodeProxies } from './episode-proxies.js';
import type { EpisodeOptions } from './episode-spec.js';
import type { SandboxResult } from './sandbox-run.js';

/** What the harness phase leaves for the collect phase. */
export interface HarnessRun {
  result: SandboxResult;
  agentPaths: EpisodeEnvironment['agentPaths'];
  gpu: number | null;
  /** The harness texts in force (the record's `harness.texts`). */
  texts: HarnessTexts;
}

/**
 * The harness phase: qwen-code's settings written into its home for the environment's proxy, then the harness run in
 * the environment with the prompt on its standard input, its events and standard error captured (bounded) into the
 * episode directory, until it ends, a limit kills it, or the proxies stop it at a failed model call.
 */
export async function runHarness(
  options: EpisodeOptions,
  episode: PreparedEpisode,
  proxies: EpisodeProxies,
  environment: EpisodeEnvironment,
  output: ReturnType<typeof captureQwenCodeOutput>,
): Promise<HarnessRun> {
  const { isolation } = environment;
  const harness = await qwenCodeCommand(
    episode.qwenCode,
    { ...environment.place, proxyBaseUrl: isolation.proxyBaseUrl! },
    {
      model: options.model,
      seed: options.seed,
      sampling: options.sampling,
      maxOutputTokens: options.maxOutputTokens,
      timeoutSeconds: episodeTimeoutSeconds(options),
      contextWindowSize: options.contextWindowSize,
      singleAgent: options.singleAgent,
      profile: episode.profile,
      images: options.images,
    },
  );
  await environment.beforeHarness();
  episode.log(`harness started (${environment.label})`);
  const result = await isolation.exec({
    command: [harness.command, ...harness.args],
    env: { ...environment.command.env, ...harness.env },
    ...(environment.command.user === undefined ? {} : { user: environment.command.user }),
    stdin: episode.prompt,
    stdout: output.events.sink,
    stderr: output.stderr.sink,
    limits: environment.command.limits,
    signal: proxies.stopHarness,
  });
  await environment.afterHarness();
  return { result, agentPaths: environment.agentPaths, gpu: environment.gpu, texts: harness.texts };
}
