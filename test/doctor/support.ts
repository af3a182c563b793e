import { parseRunConfig, type RunConfig } from '../../src/config/run-config.js';

/** A served-model run configuration whose roles all use one server, with runtime LoRA deployment (the default). */
export function servedConfig(baseUrl: string, model: string, extra: Record<string, unknown> = {}): RunConfig {
  return parseRunConfig(
    {
      name: 'doctor-check',
      suite: 'suites/none',
      roles: { executor: { model, baseUrl, maxConcurrency: 8 } },
      budgets: {
        contextWindowSize: 65_536,
        maxOutputTokensPerCall: 8_192,
        judgeMaxTokens: 8_192,
        optimizerMaxTokens: 8_192,
        judgeBundleTokens: 8_000,
      },
      ...extra,
    },
    'test configuration',
  );
}
