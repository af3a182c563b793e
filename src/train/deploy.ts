import { SystemError, UserError } from '../errors.js';
import { apiKeyFrom } from '../model/create-model.js';
import { fillArgvTemplate } from './argv-template.js';
import {
  checkServedModel,
  listServedModels,
  namesOf,
  replyError,
  requestServer,
  serverRoot,
  type InferenceServer,
  type ServedModel,
} from './inference-server.js';
import { logTail, runLoggedProcess } from './logged-process.js';
import type { ModelGeneration } from './model-generation.js';

/** Placeholders of a restart command. */
export const RESTART_PLACEHOLDERS = ['model_path', 'served_as', 'name'] as const;

export type DeployMethod =
  /** vLLM's runtime LoRA loading: the server keeps running, the adapter is added under `servedAs`. */
  | { kind: 'lora' }
  /**
   * A command (argv, no shell) that restarts the server on the merged weights and returns, e.g. `systemctl restart
   * vllm-mass` or a script that starts `vllm serve {model_path} --served-model-name {served_as}` in the background.
   * Then the server is polled until it serves the model, at most `timeoutMs` (default 15 minutes).
   */
  | { kind: 'restart'; argv: string[]; logFile: string; timeoutMs?: number; pollIntervalMs?: number };

export interface DeployOptions {
  server: InferenceServer;
  generation: ModelGeneration;
  /** For `lora`: the generation the adapter was trained over; the server must be serving it. */
  parent?: ModelGeneration;
  method: DeployMethod;
  signal?: AbortSignal;
}

export interface Deployment {
  servedAs: string;
  method: DeployMethod['kind'];
  /** True when the server already served this generation and nothing was loaded or restarted. */
  alreadyServed: boolean;
}

const LORA_SETUP =
  "start vLLM with --enable-lora (and --max-lora-rank at least the adapter's rank, 64 by default) and the " +
  'environment variable VLLM_ALLOW_RUNTIME_LORA_UPDATING=True';

/** Puts a generation on the server and returns once it answers under its served name. */
export function deployGeneration(options: DeployOptions): Promise<Deployment> {
  return options.method.kind === 'lora'
    ? loadLoraAdapter(options)
    : restartWithModel({ ...options, method: options.method });
}

/**
 * `POST /v1/load_lora_adapter` with `{lora_name: servedAs, lora_path: adapterPath}` (the path as the server's
 * machine sees it), then the check that the server answers under that name. Loading the same adapter under the
 * same name again is a no-op, so a resumed run can call this again.
 */
export async function loadLoraAdapter(options: DeployOptions): Promise<Deployment> {
  const { server, generation, parent, signal } = options;
  if (generation.adapterPath === undefined) {
    throw new UserError(
      `generation ${generation.name} has no adapter, only merged weights: deploy it with a restart command`,
    );
  }
  const models = await listServedModels(server, signal);
  if (parent && !models.some((model) => model.id === parent.servedAs)) {
    throw new UserError(
      `${serverRoot(server.baseUrl)} serves ${namesOf(models)}, not ${parent.servedAs} (generation ` +
        `${parent.name}), whose weights ${generation.name}'s adapter was trained over: serve ${parent.name} there first`,
    );
  }
  const parentEntry = parent && models.find((model) => model.id === parent.servedAs);
  if (parentEntry?.parent) {
    throw new UserError(
      `${parent!.servedAs} (generation ${parent!.name}) is itself an adapter over ${parentEntry.parent} on ` +
        `${serverRoot(server.baseUrl)}, and vLLM applies every adapter to its base weights, not to another adapter: ` +
        `${generation.name}'s adapter, trained over ${parent!.name}'s merged weights, would run on the wrong weights. ` +
        'Deploy later generations with a restart command on the merged weights (rsi.deploy.kind: restart)',
    );
  }
  const existing = models.find((model) => model.id === generation.servedAs);
  if (existing) {
    if (sameAdapter(existing, generation.adapterPath)) {
      await checkServedModel(server, generation.servedAs, signal);
      return { servedAs: generation.servedAs, method: 'lora', alreadyServed: true };
    }
    throw new UserError(
      `${serverRoot(server.baseUrl)} already serves a model named ${generation.servedAs}` +
        `${existing.root ? ` (from ${existing.root})` : ''}: unload it (POST /v1/unload_lora_adapter) or give ` +
        `generation ${generation.name} another served name`,
    );
  }
  const reply = await requestServer(server, 'POST', '/v1/load_lora_adapter', {
    body: { lora_name: generation.servedAs, lora_path: generation.adapterPath },
    signal,
  });
  if (reply.status === 404) {
    throw new UserError(
      `POST ${reply.url} answered 404: this server does not load LoRA adapters at runtime; ${LORA_SETUP}`,
    );
  }
  if (reply.status < 200 || reply.status >= 300) {
    throw replyError(
      reply,
      'POST',
      `\n(loading ${generation.adapterPath}; the server needs to ${LORA_SETUP})`,
    );
  }
  await checkServedModel(server, generation.servedAs, signal);
  return { servedAs: generation.servedAs, method: 'lora', alreadyServed: false };
}

/**
 * Runs the restart command (its output to `method.logFile`, the API key never written there), then waits until
 * the server lists the generation's served name and answers a chat request under it.
 */
export async function restartWithModel(
  options: DeployOptions & { method: Extract<DeployMethod, { kind: 'restart' }> },
): Promise<Deployment> {
  const { server, generation, method, signal } = options;
  if (generation.mergedPath === undefined) {
    throw new UserError(
      `generation ${generation.name} has only an adapter: deploy it with runtime LoRA loading, or merge it first`,
    );
  }
  const argv = fillArgvTemplate(
    method.argv,
    { model_path: generation.mergedPath, served_as: generation.servedAs, name: generation.name },
    'the restart command',
  );
  const apiKey = apiKeyFrom(server.apiKeyEnv);
  const outcome = await runLoggedProcess({
    argv,
    label: 'the restart command',
    logFile: method.logFile,
    secrets: apiKey ? [apiKey] : [],
    signal,
  });
  if (outcome.exitCode !== 0) {
    const how =
      outcome.exitCode === null ? `was killed by ${outcome.signal}` : `exited with ${outcome.exitCode}`;
    throw new SystemError(
      `the restart command ${how}; its log is ${method.logFile}, ending:\n${await logTail(method.logFile)}`,
    );
  }
  await waitUntilServed(server, generation.servedAs, method, signal);
  await checkServedModel(server, generation.servedAs, signal);
  return { servedAs: generation.servedAs, method: 'restart', alreadyServed: false };
}

async function waitUntilServed(
  server: InferenceServer,
  model: string,
  method: Extract<DeployMethod, { kind: 'restart' }>,
  signal?: AbortSignal,
): Promise<void> {
  const timeoutMs = method.timeoutMs ?? 15 * 60_000;
  const deadline = Date.now() + timeoutMs;
  let lastSeen = 'no answer yet';
  for (;;) {
    signal?.throwIfAborted();
    try {
      const models = await listServedModels(server, signal);
      if (models.some((served) => served.id === model)) return;
      lastSeen = `it serves ${namesOf(models)}`;
    } catch (error) {
      // While the server restarts, refused connections and 503s are expected.
      if (!(error instanceof SystemError || error instanceof UserError)) throw error;
      lastSeen = error.message;
    }
    if (Date.now() >= deadline) {
      throw new SystemError(
        `${serverRoot(server.baseUrl)} did not serve ${model} within ${Number((timeoutMs / 1000).toFixed(1))} s of the ` +
          `restart (last: ${lastSeen}); see the restart log ${method.logFile} and the server's own log`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, method.pollIntervalMs ?? 2_000));
  }
}

function sameAdapter(model: ServedModel, adapterPath: string): boolean {
  return model.root !== undefined && model.root !== null && model.root.replace(/\/+$/, '') === adapterPath;
}
