import { UserError } from '../errors.js';
import type { EpisodeJobData } from './episode-job.js';
import type { JobOptions } from './job-signature.js';

/**
 * What a worker's own command line allows its episodes, whoever signed the job: a job asks, the worker decides. The
 * defaults allow nothing that reaches beyond the sandbox, so a worker states what it serves.
 */
export interface WorkerPolicy {
  /** Episodes without bubblewrap (`--allow-unsandboxed`): their agents act as the worker, with its files and secrets. */
  allowUnsandboxed: boolean;
  /** Variables whose keys this worker gives its episodes' proxies (`--api-key-env`); a job names one of them or none. */
  apiKeyVariables: readonly string[];
  /** The model servers this worker's episodes may call (`--allow-endpoint`); the key goes to these only. */
  endpoints: readonly AllowedEndpoint[];
  /** Folders of task suites beside this package's own (`--allow-suite`); a task's generator runs on the worker. */
  suites: readonly string[];
  /** The most attempts a job may ask BullMQ for (`--max-attempts`). */
  maxAttempts: number;
  /** The longest a job may ask to wait, before it starts or between attempts (`--max-delay`), in milliseconds. */
  maxDelayMs: number;
  /**
   * The non-public destinations (loopback, private, link-local) this worker lets its episodes' egress proxies reach
   * (`--allow-private-destination`, entries as `network.privateDestinations` writes them); default none. A job asking
   * for one not listed here is refused: a coordinator's configuration never opens this worker's own network.
   */
  privateDestinations: readonly string[];
}

/** What `mass worker` allows unless told otherwise: the coordinator asks for 3 attempts, 5 s and then 10 s apart. */
export const DEFAULT_MAX_ATTEMPTS = 5;
export const DEFAULT_MAX_DELAY = '10m';

/** A model server by host, and by port unless any port of the host is allowed. */
export interface AllowedEndpoint {
  host: string;
  port: string | null;
}

const ENDPOINT_FORMAT = /^(\[[0-9A-Fa-f:.]+\]|[^:/@?#[\]\s]+)(?::(\d{1,5}))?$/;

/** `host` (any port) or `host:port`, as `--allow-endpoint` takes it. */
export function parseAllowedEndpoint(text: string, flag = '--allow-endpoint'): AllowedEndpoint {
  const match = ENDPOINT_FORMAT.exec(text);
  const hint = 'write the model server’s host, or host:port (e.g. gpu-1:8000), without a scheme or path';
  if (!match) throw new UserError(`${flag} ${text}: ${hint}`);
  let host: string;
  try {
    host = new URL(`http://${match[1]}`).hostname;
  } catch {
    throw new UserError(`${flag} ${text}: ${hint}`);
  }
  const port = match[2] === undefined ? null : String(Number(match[2]));
  if (port !== null && (Number(port) < 1 || Number(port) > 65_535)) {
    throw new UserError(`${flag} ${text}: ports run from 1 to 65535`);
  }
  return { host, port };
}

/** `host:port` of an allowed endpoint, as the worker's messages name it. */
export function describeEndpoint(endpoint: AllowedEndpoint): string {
  return endpoint.port === null ? `${endpoint.host} (any port)` : `${endpoint.host}:${endpoint.port}`;
}

/** Why `baseUrl` is not one of the allowed model servers, or null when it is. */
export function endpointRefusal(policy: WorkerPolicy, baseUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return `its model server ${JSON.stringify(baseUrl)} is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `its model server ${url.origin} is not http or https`;
  }
  if (url.username !== '' || url.password !== '') {
    return 'its model server’s URL holds credentials';
  }
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  const allowed = policy.endpoints.some(
    (endpoint) => endpoint.host === url.hostname && (endpoint.port === null || endpoint.port === port),
  );
  if (allowed) return null;
  const served = policy.endpoints.map(describeEndpoint).join(', ') || 'none';
  return `its model server ${url.hostname}:${port} is not one this worker serves (--allow-endpoint: ${served})`;
}

/**
 * Why this worker refuses the job whatever its signature, or null: a sandbox, key or endpoint its command line did
 * not allow. Where the job's files go is checked against the worker's folders separately (`locateJobOnWorker`).
 */
export function policyRefusal(policy: WorkerPolicy, job: EpisodeJobData): string | null {
  if (job.options.sandbox === 'unsandboxed' && !policy.allowUnsandboxed) {
    return 'it asks to run unsandboxed, and this worker was not started with --allow-unsandboxed';
  }
  if (job.apiKeyEnv !== undefined && !policy.apiKeyVariables.includes(job.apiKeyEnv)) {
    const allowed = policy.apiKeyVariables.join(', ') || 'none';
    return `it asks for the key in ${job.apiKeyEnv}, which this worker does not give episodes (--api-key-env: ${allowed})`;
  }
  const unopened = (job.options.privateDestinations ?? []).filter(
    (entry) => !policy.privateDestinations.includes(entry),
  );
  if (unopened.length > 0) {
    const allowed = policy.privateDestinations.join(', ') || 'none';
    return `it asks its egress proxy to reach ${unopened.join(', ')}, which this worker does not open (--allow-private-destination: ${allowed})`;
  }
  for (const address of [job.options.baseUrl, ...(job.replicas ?? [])]) {
    const refusal = endpointRefusal(policy, address);
    if (refusal !== null) return refusal;
  }
  return null;
}

/**
 * Why this worker refuses a job's BullMQ options, signed or not, or null: more attempts, or a longer wait before it
 * starts or between its attempts, than the worker's command line allows. Refused, never clamped: a job runs as signed
 * or not at all.
 */
export function scheduleRefusal(policy: WorkerPolicy, options: JobOptions): string | null {
  const attempts = options.attempts ?? 0;
  if (typeof attempts !== 'number' || !Number.isSafeInteger(attempts) || attempts < 0) {
    return 'its BullMQ attempts are not a whole number';
  }
  if (attempts > policy.maxAttempts) {
    return `it asks for ${attempts} attempts, more than this worker allows (--max-attempts ${policy.maxAttempts})`;
  }
  const limit = `longer than this worker allows (--max-delay ${policy.maxDelayMs / 1000} s)`;
  const delay = options.delay ?? 0;
  if (typeof delay !== 'number' || !(delay >= 0)) return 'its BullMQ delay is not a number of milliseconds';
  if (delay > policy.maxDelayMs) return `it asks to wait ${delay / 1000} s before it starts, ${limit}`;
  const backoff = longestBackoffMs(options.backoff, Math.max(attempts, 1));
  if (typeof backoff === 'string') return backoff;
  if (backoff > policy.maxDelayMs) {
    return `its back-off waits up to ${backoff / 1000} s between attempts, ${limit}`;
  }
  return null;
}

/**
 * The longest wait BullMQ's back-off puts between two of the job's attempts (the last: `fixed` waits its delay,
 * `exponential` doubles it from the first retry on), or why it is not one a worker knows.
 */
function longestBackoffMs(backoff: unknown, attempts: number): number | string {
  if (backoff === undefined || attempts < 2) return 0;
  const { type, delay } =
    typeof backoff === 'number'
      ? { type: 'fixed', delay: backoff }
      : ((backoff ?? {}) as Record<string, unknown>);
  if (typeof delay !== 'number' || !(delay >= 0)) {
    return 'its BullMQ back-off has no delay in milliseconds';
  }
  if (type === 'fixed') return delay;
  if (type === 'exponential') return delay * 2 ** (attempts - 2);
  return `its back-off ${printableType(type)} is not one this worker knows (fixed, exponential)`;
}

function printableType(type: unknown): string {
  return typeof type === 'string' ? JSON.stringify(type.slice(0, 40)) : 'without a type';
}
