import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startEgressProxy, type EgressProxy } from '../proxy/egress-proxy.js';
import type { ProxyLogRow } from '../proxy/log-row.js';
import { startRecordingProxy, type RecordingProxy } from '../proxy/recording-proxy.js';
import { episodePath } from '../store/run-paths.js';
import { egressAllowance } from '../tasks/task-network.js';
import type { PreparedEpisode } from './episode-prepare.js';
import { isChatRow } from '../records/request-provenance.js';
import type { EpisodeOptions } from './episode-spec.js';
import { TRIAL_EGRESS_SOCKET, TRIAL_PROXY_SOCKET } from './trial-environment.js';

/** The episode's proxies, listening on Unix sockets the environment shows its code. */
export interface EpisodeProxies {
  /** The recording proxy to the model server: the episode's log, its facts and its output budget. */
  proxy: RecordingProxy;
  socketPath: string;
  /** The egress proxy, when the episode's network allows anything beyond the model. */
  egress: EgressProxy | null;
  /** Fires at the first failed model call when the options stop the harness there. */
  stopHarness: AbortSignal;
  /** The log row of the failed call that stopped the harness (agent code may have posted it), or null. */
  stoppedAt(): number | null;
  /** Stops both proxies and removes their sockets (the sockets' folder too, unless it is a trial environment's). */
  close(): Promise<void>;
}

/**
 * The proxies phase: the recording proxy to the model server and, when the network allows anything, the egress
 * proxy, each on a socket in a short folder of its own (Unix socket paths are limited to 107 bytes), or in the trial
 * environment's socket folder. The sandbox sees the folders (read-only), never the logs.
 */
export async function startEpisodeProxies(
  options: EpisodeOptions,
  episode: PreparedEpisode,
): Promise<EpisodeProxies> {
  const trialSockets = options.environment?.socketDirectory ?? null;
  const socketDirectory = trialSockets ?? (await mkdtemp(join(tmpdir(), 'mass-sock-')));
  const socketPath = join(socketDirectory, TRIAL_PROXY_SOCKET);
  const stop = new AbortController();
  let stoppedAt: number | null = null;
  let proxy: RecordingProxy | null = null;
  let egress: EgressProxy | null = null;
  let egressDirectory: string | null = null;
  const close = async () => {
    await egress?.close();
    await proxy?.close();
    if (trialSockets === null) {
      if (egressDirectory !== null) await rm(egressDirectory, { recursive: true, force: true });
      await rm(socketDirectory, { recursive: true, force: true });
    } else {
      // The sockets' folder is the environment's: only the sockets go.
      await rm(socketPath, { force: true });
      await rm(join(socketDirectory, TRIAL_EGRESS_SOCKET), { force: true });
    }
  };
  try {
    proxy = await startRecordingProxy({
      upstream: options.baseUrl,
      listen: { socketPath },
      logFile: episodePath(episode.outDir, 'proxyLog'),
      outputBudget: options.outputBudget,
      upstreamApiKey: options.apiKey,
      retry: options.retry,
      onRow: (row) => {
        if ((options.stopOnModelError ?? true) && isFailedModelCall(row)) {
          stoppedAt ??= row.seq;
          stop.abort();
        }
      },
    });
    if (episode.network !== false) {
      egressDirectory = trialSockets ?? (await mkdtemp(join(tmpdir(), 'mass-egress-')));
      egress = await startEgressProxy({
        allow: egressAllowance(episode.network),
        privateDestinations: options.privateDestinations ?? [],
        socketPath: join(egressDirectory, TRIAL_EGRESS_SOCKET),
        logFile: episodePath(episode.outDir, 'egressLog'),
      });
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { proxy, socketPath, egress, stopHarness: stop.signal, stoppedAt: () => stoppedAt, close };
}

function isFailedModelCall(row: ProxyLogRow): boolean {
  return (
    isChatRow(row) &&
    !row.clientDisconnected &&
    (row.error !== null || row.status === null || row.status >= 400)
  );
}
