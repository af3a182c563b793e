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
import type { ModelGeneration } from '../records/model-generation.js';

/** Placeholders of a restart command; `{base_url}` is the address of the server (the replica) it restarts. */
export const RESTART_PLACEHOLDERS = ['model_path', 'served_as', 'name', 'base_url'] as const;

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
  /**
   * For `lora`: the generation whose full weights the adapter applies to (its `adapterBase`, else its parent); the
   * server must serve it as a base model, not as an adapter.
   */
  base?: ModelGeneration;
  /**
   * For `lora`: generations whose adapters this one takes the place of (the previous generation's): each that the
   * server serves as an adapter is unloaded once the new generation answers, so that the server holds its base
   * model and the latest adapter.
   */
  replaces?: readonly ModelGeneration[];
  method: DeployMethod;
  signal?: AbortSignal;
}

export interface Deployment {
  servedAs: string;
  method: DeployMethod['kind'];
  /** True when the server already served this generation and nothing was loaded or restarted. */
  alreadyServed: boolean;
  /** The served names of the adapters unloaded after it answered (`replaces`); absent when none was. */
  unloaded?: string[];
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
 * machine sees it), then the check that the server answers under that name, then `POST /v1/unload_lora_adapter` for
 * each adapter it `replaces`. The server must serve the adapter's base generation as a base model. Loading the same
 * adapter under the same name again loads nothing, and an adapter already unloaded is not asked for again, so a
 * resumed run can call this again.
 */
export async function loadLoraAdapter(options: DeployOptions): Promise<Deployment> {
  const { server, generation, base, signal } = options;
  if (generation.adapterPath === undefined) {
    throw new UserError(
      `generation ${generation.name} has no adapter, only merged weights: deploy it with a restart command`,
    );
  }
  const models = await listServedModels(server, signal);
  const baseEntry = base && models.find((model) => model.id === base.servedAs);
  if (base && !baseEntry) {
    throw new UserError(
      `${serverRoot(server.baseUrl)} serves ${namesOf(models)}, not ${base.servedAs} (generation ` +
        `${base.name}), whose weights ${generation.name}'s adapter was trained over: serve ${base.name} there first`,
    );
  }
  if (base && baseEntry?.parent) {
    throw new UserError(
      `${base.servedAs} (generation ${base.name}) is itself an adapter over ${baseEntry.parent} on ` +
        `${serverRoot(server.baseUrl)}, and vLLM applies every adapter to its base weights, not to another adapter: ` +
        `${generation.name}'s adapter, trained over ${base.name}'s merged weights, would run on the wrong weights. ` +
        'Deploy later generations with a restart command on the merged weights (rsi.deploy.kind: restart), or ' +
        'train every generation as an adapter over the base model the server was started with (rsi.lineage: adapters)',
    );
  }
  const existing = models.find((model) => model.id === generation.servedAs);
  if (existing && !sameAdapter(existing, generation.adapterPath)) {
    throw new UserError(
      `${serverRoot(server.baseUrl)} already serves a model named ${generation.servedAs}` +
        `${existing.root ? ` (from ${existing.root})` : ''}: unload it (POST /v1/unload_lora_adapter) or give ` +
        `generation ${generation.name} another served name`,
    );
  }
  if (existing && base && existing.parent && existing.parent !== base.servedAs) {
    throw new UserError(
      `${serverRoot(server.baseUrl)} serves ${generation.servedAs} as an adapter over ${existing.parent}, not over ` +
        `${base.servedAs} (generation ${base.name}), whose weights it was trained over: unload it ` +
        '(POST /v1/unload_lora_adapter) and serve it over the right base model',
    );
  }
  if (!existing) {
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
  }
  await checkServedModel(server, generation.servedAs, signal);
  const unloaded: string[] = [];
  for (const replaced of options.replaces ?? []) {
    const entry = models.find((model) => model.id === replaced.servedAs);
    // Only adapters: a base model is never unloaded, nor the generation just deployed or its base.
    if (!entry?.parent || replaced.servedAs === generation.servedAs || replaced.servedAs === base?.servedAs) {
      continue;
    }
    await unloadLoraAdapter(server, replaced, signal);
    unloaded.push(replaced.servedAs);
  }
  return {
    servedAs: generation.servedAs,
    method: 'lora',
    alreadyServed: existing !== undefined,
    ...(unloaded.length > 0 ? { unloaded } : {}),
  };
}

/** `POST /v1/unload_lora_adapter` with `{lora_name: servedAs}`. */
async function unloadLoraAdapter(
  server: InferenceServer,
  generation: ModelGeneration,
  signal?: AbortSignal,
): Promise<void> {
  const reply = await requestServer(server, 'POST', '/v1/unload_lora_adapter', {
    body: { lora_name: generation.servedAs },
    signal,
  });
  if (reply.status < 200 || reply.status >= 300) {
    throw replyError(
      reply,
      'POST',
      `\n(unloading ${generation.servedAs}, generation ${generation.name}'s adapter, which the newer one replaces)`,
    );
  }
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
    {
      model_path: generation.mergedPath,
      served_as: generation.servedAs,
      name: generation.name,
      base_url: server.baseUrl,
    },
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
  return awaitRestart(server, generation.servedAs, method, signal);
}

/**
 * After a restart command: waits until the server lists `servedAs` and answers a chat request under it (a replica
 * that another replica's restart command restarted too).
 */
export async function awaitRestart(
  server: InferenceServer,
  servedAs: string,
  method: Extract<DeployMethod, { kind: 'restart' }>,
  signal?: AbortSignal,
): Promise<Deployment> {
  await waitUntilServed(server, servedAs, method, signal);
  await checkServedModel(server, servedAs, signal);
  return { servedAs, method: 'restart', alreadyServed: false };
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
