import { endpointAddresses, roleEndpoints } from '../config/endpoint.js';
import type { RunConfig } from '../config/run-config.js';
import { declareReplicas } from '../model/replicas.js';
import {
  awaitRestart,
  deployGeneration,
  loadLoraAdapter,
  type Deployment,
  type DeployOptions,
} from '../train/deploy.js';
import type { InferenceServer } from '../train/inference-server.js';
import { whileServerSleeps } from '../train/server-sleep.js';

/**
 * Replicas of a served model (`roles.<role>.replicas`): several servers of one model under one name. Calls spread
 * over them (`src/model/replicas.ts`); what puts a generation on the server (a deployment, the deployment check,
 * sleep mode) reaches each of them here.
 */

/**
 * Declares the replicas of each role's endpoint (and of the evaluation's judges and models) for this process, so that
 * every client given an endpoint's `baseUrl` (the episodes' recording proxies, the judge's and optimizer's clients,
 * the outage gates) spreads its calls over them.
 */
export function declareConfiguredReplicas(config: RunConfig): void {
  const endpoints = [
    ...Object.values(roleEndpoints(config)),
    ...(config.evaluation?.judges ?? []),
    ...(config.evaluation?.models ?? []).map((model) => model.endpoint),
  ];
  for (const endpoint of endpoints) {
    if (endpoint.baseUrl !== undefined) declareReplicas(endpoint.baseUrl, endpoint.replicas ?? []);
  }
}

/** The executor's servers: its `baseUrl`, then each replica, each with the role's key. */
export function executorServers(config: RunConfig): InferenceServer[] {
  const { executor } = config.roles;
  return endpointAddresses(executor).map((baseUrl) => ({
    baseUrl,
    ...(executor.apiKeyEnv === undefined ? {} : { apiKeyEnv: executor.apiKeyEnv }),
  }));
}

/**
 * Puts a generation on every replica, one after the other (the others keep serving while one restarts). Runtime
 * LoRA loads the adapter into each. A restart command that names `{base_url}` is run once per replica with its
 * address; one that does not is run once (it restarts every replica itself), and each other replica is then waited
 * for until it serves the generation.
 */
export async function deployToReplicas(
  servers: readonly InferenceServer[],
  options: Omit<DeployOptions, 'server'>,
): Promise<Deployment[]> {
  const { method } = options;
  const perReplica =
    method.kind === 'lora' || method.argv.some((argument) => argument.includes('{base_url}'));
  const deployments: Deployment[] = [];
  for (const [index, server] of servers.entries()) {
    if (perReplica || index === 0) deployments.push(await deployGeneration({ ...options, server }));
    else if (method.kind === 'restart') {
      deployments.push(await awaitRestart(server, options.generation.servedAs, method, options.signal));
    }
  }
  return deployments;
}

/** The adapter loaded again into each replica that no longer serves it (a restarted replica). */
export async function reloadAdapterOnReplicas(
  servers: readonly InferenceServer[],
  options: Omit<DeployOptions, 'server' | 'method'>,
  served: (server: InferenceServer) => Promise<boolean>,
): Promise<void> {
  for (const server of servers) {
    if (!(await served(server))) await loadLoraAdapter({ ...options, server, method: { kind: 'lora' } });
  }
}

/** `work` (the training) with every replica asleep; each is woken afterwards, whether the work succeeded or not. */
export function whileReplicasSleep<T>(
  servers: readonly InferenceServer[],
  work: () => Promise<T>,
): Promise<T> {
  const asleep = servers.reduceRight<() => Promise<T>>(
    (inner, server) => () => whileServerSleeps(server, inner),
    work,
  );
  return asleep();
}
