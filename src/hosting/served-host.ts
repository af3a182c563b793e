import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { generationEndpoints, roleEndpoints, type Endpoint } from '../config/endpoint.js';
import type { RunConfig } from '../config/run-config.js';
import { deploySetting, lineageSetting } from '../config/rsi-settings.js';
import { UserError } from '../errors.js';
import { durationMs } from '../timer-duration.js';
import { SystemError } from '../errors.js';
import type { DeployMethod } from '../train/deploy.js';
import { PROBE_FILE } from '../train/deployment-check.js';
import { exportFp8 } from '../train/fp8-export.js';
import { checkServedModel, listServedModels } from '../train/inference-server.js';
import { adapterBaseOf, type ModelGeneration } from '../records/model-generation.js';
import type { ModelHost, ServedGeneration } from '../train/model-host.js';
import type { ModelRegistry } from '../records/registry.js';
import { checkGenerationOnReplicas, generationProbeFile, hasProbe } from './generation-check.js';
import {
  declareConfiguredReplicas,
  deployToReplicas,
  executorServers,
  reloadAdapterOnReplicas,
  whileReplicasSleep,
} from './replica-serving.js';

/**
 * A model the user serves (vLLM or any OpenAI-compatible server at `roles.executor.baseUrl`): L0 must already answer
 * there; each trained generation is deployed onto that server by `rsi.deploy`, vLLM's runtime LoRA loading (the
 * previous generation's adapter unloaded once the new one answers) or a command that restarts it on the merged
 * weights. With replicas (`roles.executor.replicas`), each of these reaches every replica.
 */
export function servedHost(config: RunConfig): ModelHost {
  const deploy = deploySetting(config.rsi);
  declareConfiguredReplicas(config);
  const servers = executorServers(config);
  const served = (generation: ModelGeneration): ServedGeneration => ({
    endpoints: generationEndpoints(config, generation.servedAs),
    close: async () => {},
  });
  const method = (generation: ModelGeneration, runDirectory: string): DeployMethod =>
    deploy.kind === 'restart'
      ? {
          kind: 'restart',
          argv: deploy.argv,
          logFile: join(runDirectory, 'train', generation.name, 'deploy.log'),
          timeoutMs: durationMs(deploy.timeoutSeconds, 's'),
        }
      : { kind: 'lora' };
  /** The generation with its merged weights exported to FP8 (`train/<name>/fp8`): what the restart serves. */
  const fp8Generation = async (generation: ModelGeneration, trainDirectory: string) => {
    if (generation.mergedPath === undefined) {
      throw new UserError(
        `rsi.deploy.format fp8: generation ${generation.name} has no merged weights to export`,
      );
    }
    const probe = join(trainDirectory, PROBE_FILE);
    const report = await exportFp8({
      src: generation.mergedPath,
      out: join(trainDirectory, 'fp8'),
      ...(existsSync(probe) ? { probe } : {}),
      ...(config.rsi.trainer?.kind === 'python' && config.rsi.trainer.python
        ? { python: config.rsi.trainer.python }
        : {}),
      logFile: join(trainDirectory, 'fp8-export.log'),
    });
    return { ...generation, mergedPath: report.out };
  };
  /**
   * The deployment check on every replica against the probe the trainer left (`probe.json` beside its weights, or
   * the FP8 export's); a trainer that leaves none (a training command of yours) is not checked, and the run says so
   * once.
   */
  const checkDeploymentOf = async (
    generation: ModelGeneration,
    registry: ModelRegistry,
    runDirectory: string,
  ) => {
    const { probeFile, weights } = generationProbeFile(config, runDirectory, generation.name);
    if (!hasProbe(probeFile)) {
      process.stderr.write(
        `warning: no deployment check for ${generation.name}: its trainer left no ${probeFile} (the bundled python trainer does)\n`,
      );
      return;
    }
    const check = await checkGenerationOnReplicas({ config, generation, servers, probeFile, weights });
    if (check.mismatch !== null) throw new SystemError(check.mismatch);
    await registry.recordDeploymentCheck(generation.name, check.record);
  };
  return {
    standIn: null,
    checkRounds(rounds) {
      // vLLM applies a runtime adapter to the weights it was started with, the base model's; in the paper's lineage,
      // from L2 on each generation's adapter is trained over its parent's merged weights, which that server does not
      // hold. Adapters over the base (rsi.lineage: adapters) are served for any number of rounds.
      if (deploy.kind !== 'lora' || rounds < 2 || lineageSetting(config.rsi) === 'adapters') return;
      throw new UserError(
        `rsi.deploy.kind lora can serve only the first trained generation, L1 (an adapter over the base model the ` +
          `server was started with): from L2 on each generation is trained over its parent's merged weights. For ` +
          `--rounds ${rounds}, deploy with \`rsi.deploy: { kind: restart, argv: [...] }\`, a command that restarts ` +
          'the server on {model_path} as {served_as} (docs/outer-loop-and-training.md), or keep every generation an ' +
          "adapter over the base model, trained from its parent's adapter, with `rsi.lineage: adapters`, or run --rounds 1",
      );
    },
    baseWeights: async () => config.rsi.baseModel ?? config.roles.executor.model,
    serveBase: async () => ({ endpoints: roleEndpoints(config), close: async () => {} }),
    async serve(generation, registry, runDirectory) {
      const base = adapterBaseOf(generation);
      if (base === null) {
        for (const server of servers) await checkServedModel(server, generation.servedAs);
        return served(generation);
      }
      const trainDirectory = join(runDirectory, 'train', generation.name);
      const fp8 = deploy.kind === 'restart' && deploy.format === 'fp8';
      const deployed = fp8 ? await fp8Generation(generation, trainDirectory) : generation;
      await deployToReplicas(servers, {
        generation: deployed,
        base: registry.require(base),
        // The server keeps its base model and the latest generation: every other adapter of the run goes.
        replaces: registry.list().filter((other) => other.name !== generation.name && other.parent !== null),
        method: method(generation, runDirectory),
      });
      if (deploy.check !== false) await checkDeploymentOf(generation, registry, runDirectory);
      return served(generation);
    },
    duringTraining: (work) => (config.rsi.sleepDuringTraining ? whileReplicasSleep(servers, work) : work()),
    async reach(generation, registry) {
      const base = adapterBaseOf(generation);
      // An adapter the server no longer holds (an older generation, or a restarted server) is loaded again.
      if (deploy.kind === 'lora' && base !== null && registry && generation.adapterPath !== undefined) {
        await reloadAdapterOnReplicas(servers, { generation, base: registry.require(base) }, async (server) =>
          (await listServedModels(server)).some((model) => model.id === generation.servedAs),
        );
      }
      for (const server of servers) await checkServedModel(server, generation.servedAs);
      return served(generation);
    },
    place: async (endpoint: Endpoint) => ({ endpoint, close: async () => {} }),
  };
}
