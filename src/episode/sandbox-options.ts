import type { SandboxMode } from '../config/sandbox-mode.js';
import type { PlacedDirectory } from './sandbox-bubblewrap.js';

/** `bubblewrap`: the isolation below; `unsandboxed`: nothing is isolated (`config/sandbox-mode.ts`). */
export type { SandboxMode };

/**
 * Inside a bubblewrap sandbox only what is listed here exists (an allow-list): the host's programs and libraries
 * (/usr, /bin, /lib…), the part of /etc they read (never shadow or other secrets) and the CPU topology, all read-only;
 * the sandbox's own passwd, group and hosts; a private /dev, /proc and /tmp (a size-capped tmpfs); the readable
 * directories (the harness and its Node) read-only at their host paths; the workspace at `/workspace` and the home at
 * `/home/agent` wherever they lie on the host (so what the agents see and write, and the training data made from it,
 * is the same wherever a run lives). Nothing else of the host: not the checkout that holds the harness, its git store
 * or its suites, not other runs, not the host's homes. No network but loopback and the forwarder to the proxies, no
 * capabilities, its own pid, IPC, UTS and user namespaces. When mass runs as root the processes inside run as a uid
 * of their own (`sandbox-user.ts`), so host files not readable by everyone stay unreadable. When the command exits,
 * its namespace dies with everything it started. Without a sandbox every path is the host's.
 */
export interface SandboxOptions {
  mode: SandboxMode;
  /** The agents' workspace, writable. */
  workspace: string;
  /** Further writable directories, created when missing; at their host paths inside. */
  writableDirectories?: string[];
  /**
   * Host directories shown at fixed paths of their own inside a bubblewrap sandbox (created when missing), writable
   * or read-only: a verifier's `/tests` and `/logs/verifier`. Without a sandbox a command finds them at their host
   * paths (`placedPath`).
   */
  placedDirectories?: PlacedDirectory[];
  /** HOME, writable, at `/home/agent` inside; default `<stateDirectory>/home`. */
  homeDirectory?: string;
  /** Files or directories in the workspace (absolute, or relative to it) that must stay as they are. */
  readOnlyPaths?: string[];
  /**
   * Paths inside what the sandbox shows (the system's folders, the readable directories) replaced by an empty
   * read-only folder, or for a file an empty read-only file: a key kept under /usr/local, say, or the tests beside a
   * package. Paths outside what is shown are not visible anyway and are skipped (the run directory, the suites), as
   * are those that do not exist. A readable directory inside a hidden one is still shown.
   */
  hiddenDirectories?: string[];
  /**
   * Directories shown read-only at their own paths (and at their resolved paths, when a symbolic link leads there):
   * the harness's package and its Node, say. The sandbox shows nothing else of the host beyond its system.
   */
  readableDirectories?: string[];
  /** Where the sandbox keeps its own files (the forwarder), e.g. `<episode dir>/sandbox`; read-only inside. */
  stateDirectory: string;
  /**
   * The episode proxy's Unix socket. Its directory is mounted read-only inside: give the socket one of its own.
   * The proxy must listen before `run`, which gives the socket to the sandbox's user.
   */
  proxySocketPath?: string;
  /** The forwarder's port on the sandbox's loopback; default 18080. Without a sandbox the system picks one. */
  forwarderPort?: number;
  /**
   * The episode's egress proxy's Unix socket, when its task allows network (`egress-proxy.ts`): reached like the
   * model proxy, through the forwarder, and named by the proxy variables of every command (`egressEnvironment`).
   * Its directory is mounted read-only inside: give the socket one of its own.
   */
  egressSocketPath?: string;
  /** The egress forwarder's port on the sandbox's loopback; default 18081. Without a sandbox the system picks one. */
  egressForwarderPort?: number;
  /**
   * A GPU of the host for this sandbox alone (its index, `/dev/nvidia<index>`; see `GpuPool`): its device node and the
   * driver's shared ones are shown in the sandbox's /dev, and `CUDA_VISIBLE_DEVICES` names it. Default none.
   */
  gpu?: number;
  /** Where the host's device nodes are; default /dev (tests give stand-ins). */
  devRoot?: string;
  /** The size cap of the private /tmp; default 1 GiB. */
  tmpSizeBytes?: number;
  /** Default: `bwrap` on PATH. */
  bwrapPath?: string;
  /** The Node that runs the forwarder inside (its folder is shown); default this process's. */
  nodePath?: string;
  /** Where the unsandboxed-mode warning goes; default standard error. */
  warn?: (message: string) => void;
}
