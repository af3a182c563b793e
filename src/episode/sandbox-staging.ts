import { join, relative } from 'node:path';

import { isInside } from './sandbox-bubblewrap.js';
import type { SandboxUser } from './sandbox-user.js';

/**
 * How a sandbox of an unprivileged uid gets folders that uid cannot reach by path. bwrap run by that uid resolves
 * every bind source with its permissions, so a checkout, workspace or home under a 0700 folder (a clone under
 * /root, a temporary folder) cannot be bound; and `--bind-fd` does not help, since bwrap 0.8 turns the descriptor
 * back into a path. So a first bwrap, run by root with no namespace but a mount namespace of its own, binds each such
 * folder onto a private tmpfs at `stageDirectory` (an empty folder in /tmp that the uid can traverse), then becomes
 * the uid (setpriv, all capabilities dropped) and starts the sandbox's bwrap, which binds from there. The staged
 * folders exist in that mount namespace only: nothing is mounted on the host, and nothing outlives the sandbox.
 */
export interface Staging {
  /** The command line that runs `inner` (a bwrap command line) as the sandbox user, with the folders staged. */
  command(inner: string[]): string[];
  /** Where the inner bwrap reads a host path from. */
  sourceOf(hostPath: string): string;
}

interface StagingOptions {
  bwrapPath: string;
  setprivPath: string;
  user: SandboxUser;
  /** An empty directory that the sandbox user can reach; covered by a tmpfs in the first bwrap's namespace only. */
  stageDirectory: string;
  /** Host directories (absolute, resolved) the sandbox binds; paths inside them are read through their stage. */
  roots: string[];
}

export function staging(options: StagingOptions): Staging {
  const roots = [...new Set(options.roots)];
  const staged = roots.map((root, index) => ({ root, stage: join(options.stageDirectory, String(index)) }));
  const sourceOf = (hostPath: string): string => {
    // The innermost root that holds the path: its own folder may be another root's (the home in the state).
    let best: { root: string; stage: string } | null = null;
    for (const entry of staged) {
      if (hostPath !== entry.root && !isInside(entry.root, hostPath)) continue;
      if (best === null || entry.root.length > best.root.length) best = entry;
    }
    return best === null ? hostPath : join(best.stage, relative(best.root, hostPath));
  };
  return {
    sourceOf,
    command: (inner) => {
      const { user, bwrapPath, setprivPath, stageDirectory } = options;
      const args = [bwrapPath, '--dev-bind', '/', '/', '--tmpfs', stageDirectory];
      for (const { root, stage } of staged) args.push('--bind', root, stage);
      // Root without a user namespace keeps every capability unless told otherwise: only those setpriv needs. A pid
      // namespace of its own, so that the sandbox dies with this bwrap: the second bwrap's --die-with-parent does not
      // fire once setpriv has changed its user (measured: it outlived a killed first bwrap), while every process of
      // a pid namespace dies with its init, which dies with its parent.
      args.push('--unshare-pid', '--die-with-parent');
      args.push('--cap-drop', 'ALL', '--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID');
      args.push('--', setprivPath, '--reuid', String(user.uid), '--regid', String(user.gid));
      args.push('--clear-groups', '--inh-caps=-all', '--', ...inner);
      return args;
    },
  };
}
