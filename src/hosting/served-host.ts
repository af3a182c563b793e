import { join } from 'node:path';

import { generationEndpoints, roleEndpoints, type Endpoint } from '../config/endpoint.js';
import type { RunConfig } from '../config/run-config.js';
import { deploySetting } from '../config/rsi-settings.js';
import { UserError } from '../errors.js';
import { deployGeneration } from '../train/deploy.js';
import { checkServedModel } from '../train/inference-server.js';
import type { ModelGeneration } from '../train/model-generation.js';
import type { ModelHost, ServedGeneration } from '../train/model-host.js';

/**
 * A model the user serves (vLLM or any OpenAI-compatible server at `roles.executor.baseUrl`): L0 must already answer
 * there; each trained generation is deployed onto that server by `rsi.deploy`, vLLM's runtime LoRA loading or a
 * command that restarts it on the merged weights.
 */
export function servedHost(config: RunConfig): ModelHost {
  const deploy = deploySetting(config.rsi);
  const server = {
    baseUrl: config.roles.executor.baseUrl!,
    apiKeyEnv: config.roles.executor.apiKeyEnv,
  };
  const served = (generation: ModelGeneration): ServedGeneration => ({
    endpoints: generationEndpoints(config, generation.servedAs),
    close: async () => {},
  });
  return {
    standIn: null,
    checkRounds(rounds) {
      // vLLM applies a runtime adapter to the weights it was started with, the base model's; from L2 on, each
      // generation's adapter is trained over its parent's merged weights, which that server does not hold.
      if (deploy.kind !== 'lora' || rounds < 2) return;
      throw new UserError(
        `rsi.deploy.kind lora can serve only the first trained generation, L1 (an adapter over the base model the ` +
          `server was started with): from L2 on each generation is trained over its parent's merged weights. For ` +
          `--rounds ${rounds}, deploy with \`rsi.deploy: { kind: restart, argv: [...] }\`, a command that restarts ` +
          'the server on {model_path} as {served_as} (docs/outer-loop-and-training.md), or run --rounds 1',
      );
    },
    baseWeights: async () => config.rsi.baseModel ?? config.roles.executor.model,
    serveBase: async () => ({ endpoints: roleEndpoints(config), close: async () => {} }),
    async serve(generation, registry, runDirectory) {
      if (generation.parent === null) {
        await checkServedModel(server, generation.servedAs);
      } else {
        await deployGeneration({
          server,
          generation,
          parent: registry.require(generation.parent),
          method:
            deploy.kind === 'restart'
              ? {
                  kind: 'restart',
                  argv: deploy.argv,
                  logFile: join(runDirectory, 'train', generation.name, 'deploy.log'),
                  timeoutMs: deploy.timeoutSeconds * 1000,
                }
              : { kind: 'lora' },
        });
      }
      return served(generation);
    },
    async reach(generation) {
      await checkServedModel(server, generation.servedAs);
      return served(generation);
    },
    place: async (endpoint: Endpoint) => ({ endpoint, close: async () => {} }),
  };
}
