import { rm } from 'node:fs/promises';
import { join } from 'node:path';

import type { RunConfig } from '../config/run-config.js';
import { TRIAL_EGRESS_SOCKET, type TrialEnvironment } from '../episode/trial-environment.js';
import { startEgressProxy } from '../proxy/egress-proxy.js';
import type { Run } from '../store/run-store.js';
import { egressAllowance, type EpisodeNetwork } from '../tasks/task-network.js';

/**
 * The task's network for a command that is not the harness's (the oracle's, the verifier's): the same egress proxy,
 * allowance (an allow-list, or every public host) and run configuration's private destinations the agent gets,
 * listening in the environment's socket folder while `work` runs; none without one.
 */
export async function withEgress<T>(
  run: Run<RunConfig>,
  environment: TrialEnvironment,
  network: EpisodeNetwork,
  logFile: string,
  work: () => Promise<T>,
): Promise<T> {
  if (network === false) return work();
  const egress = await startEgressProxy({
    allow: egressAllowance(network),
    privateDestinations: run.config.network?.privateDestinations ?? [],
    socketPath: join(environment.socketDirectory, TRIAL_EGRESS_SOCKET),
    logFile,
  });
  try {
    return await work();
  } finally {
    await egress.close();
    await rm(join(environment.socketDirectory, TRIAL_EGRESS_SOCKET), { force: true });
  }
}
