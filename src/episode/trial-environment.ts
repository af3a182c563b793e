import { mkdir } from 'node:fs/promises';

import type { HandBackReport } from './hand-back-files.js';
import type { IsolatedCommand, Isolation } from './isolation.js';

/** Where code inside reaches the episode's model proxy and egress proxy (the forwarder's ports on its loopback). */
export const TRIAL_PROXY_PORT = 18080;
export const TRIAL_EGRESS_PORT = 18081;
/** The names the proxies' sockets take in a trial's socket folder (`TrialEnvironment.socketDirectory`). */
export const TRIAL_PROXY_SOCKET = 'proxy.sock';
export const TRIAL_EGRESS_SOCKET = 'egress.sock';

/** One command in a trial's environment. */
export type TrialCommand = IsolatedCommand;

/**
 * One environment for one trial, Harbor's way: made once, then the agent's commands, the files put in for the
 * verifier (or the oracle), the verifier's commands and the files read back all happen in it, and it is removed at the
 * end. Code inside reaches the model only through `proxyBaseUrl` (the forwarder to the proxy socket the caller starts in
 * `socketDirectory`), and the internet only through `egressProxyUrl` when the caller starts an egress proxy there.
 * Implementations: a container of the task's image (`trial-environment-container.ts`) and a bubblewrap sandbox over
 * folders the trial owns (`trial-environment-bubblewrap.ts`). Both are an `Isolation`, as an episode's own sandbox is.
 */
export interface TrialEnvironment extends Isolation {
  readonly kind: 'container' | 'bubblewrap';
  /** Where commands start: the image's WORKDIR in a container, `/workspace` in bubblewrap. */
  readonly workdir: string;
  /** A host folder for the proxies' sockets (`TRIAL_PROXY_SOCKET`, `TRIAL_EGRESS_SOCKET`); short, of its own. */
  readonly socketDirectory: string;
  /** The model proxy as code inside reaches it (no `/v1`). */
  readonly proxyBaseUrl: string;
  /** The egress proxy as code inside reaches it, when the caller listens on `TRIAL_EGRESS_SOCKET`. */
  readonly egressProxyUrl: string;
  /** A host folder shown read-only inside, for files the host writes for a command (a harness's guard). */
  readonly sharedDirectory: { host: string; inside: string };
  /**
   * Puts a host folder's contents at `inside` (an absolute folder), readable by `user`, in place of whatever was there:
   * nothing an earlier command left at `inside` stays beside them.
   */
  putFiles(hostFolder: string, inside: string, user?: string | null): Promise<void>;
  /**
   * Hands the folder `inside` back into `hostFolder` (`handBackFiles`): files of the host's user, no set-user-ID or
   * set-group-ID bit, no link followed or made. A folder that does not exist inside hands back nothing (null).
   */
  getFiles(inside: string, hostFolder: string): Promise<HandBackReport | null>;
  /** Ends every process and removes what the environment made that is not the trial's record; idempotent. */
  remove(): Promise<void>;
}

/**
 * The agent's working folder handed back into `hostFolder` (made empty when nothing comes back). An image without a
 * WORKDIR starts its commands at `/`: that is the whole image, not a workspace, so nothing is handed back and the
 * trial's record keeps only what the verifier and the logs say.
 */
export async function handBackWorkdir(
  environment: Pick<TrialEnvironment, 'workdir' | 'getFiles'>,
  hostFolder: string,
): Promise<HandBackReport | null> {
  const handed =
    environment.workdir === '/' ? null : await environment.getFiles(environment.workdir, hostFolder);
  if (handed === null) await mkdir(hostFolder, { recursive: true });
  return handed;
}
