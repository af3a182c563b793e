import { join, relative } from 'node:path';

import { directoriesBetween, type BubblewrapMounts } from './sandbox-bubblewrap.js';
import type { SandboxLimits } from './sandbox-limits.js';

/** A container image a task needs, and the engine (`docker` or `podman`, a path or a name on PATH) that runs it. */
export interface ContainerImage {
  engine: string;
  image: string;
}

/**
 * The command line that runs `command` in a fresh container of `image` in place of a bubblewrap sandbox: the image's
 * own system, and of the host only what the sandbox would mount (the workspace at /workspace, the home at
 * /home/agent, the sandbox's own files, the harness and its Node read-only at their host paths, the proxies' socket
 * folders, the placed folders), with what bubblewrap hides hidden the same way (an empty read-only folder over each hidden
 * directory, an empty file over each hidden file) and the folders between the workspace and a protected file pinned
 * (a mount point cannot be renamed away with its protected file). No network but the container's loopback, where the forwarder relays to the episode's
 * proxy sockets as in bubblewrap, so the model is still reached only through the proxy. No capabilities, no new
 * privileges; memory and processes capped by the engine; `--init` reaps what the command leaves, and the container is
 * removed when it ends (`name` lets the caller remove it when it is killed).
 */
export function containerRunArguments(options: {
  container: ContainerImage;
  name: string;
  mounts: BubblewrapMounts;
  /** A path inside. */
  cwd: string;
  env: Record<string, string>;
  limits: SandboxLimits;
  command: readonly string[];
}): string[] {
  const { mounts, limits } = options;
  const volume = (host: string, inside: string, writable: boolean) => [
    '--volume',
    `${host}:${inside}:${writable ? 'rw' : 'ro'}`,
  ];
  const inWorkspace = (path: string) => join(mounts.workspace.inside, relative(mounts.workspace.host, path));
  const pinned = [
    ...new Set(mounts.readOnlyPaths.flatMap((path) => directoriesBetween(mounts.workspace.host, path))),
  ];
  return [
    options.container.engine,
    'run',
    '--rm',
    '--init',
    '--name',
    options.name,
    '--network',
    'none',
    '--cap-drop',
    'ALL',
    '--security-opt',
    'no-new-privileges',
    ...(limits.memoryBytes === undefined ? [] : ['--memory', String(Math.floor(limits.memoryBytes))]),
    ...(limits.processes === undefined ? [] : ['--pids-limit', String(limits.processes)]),
    // The engine mounts parents before children, so a readable folder inside a hidden one is shown over it.
    ...mounts.readableDirectories.flatMap(({ host, inside }) => volume(host, inside, false)),
    ...mounts.hiddenDirectories.flatMap((directory) => ['--tmpfs', `${directory}:ro`]),
    ...mounts.hiddenFiles.flatMap((file) => volume(mounts.emptyFile, file, false)),
    ...volume(mounts.state.host, mounts.state.inside, false),
    ...volume(mounts.workspace.host, mounts.workspace.inside, true),
    ...volume(mounts.home.host, mounts.home.inside, true),
    ...mounts.writableDirectories.flatMap((directory) => volume(directory, directory, true)),
    ...mounts.placed.flatMap(({ host, inside, writable }) => volume(host, inside, writable)),
    ...pinned.flatMap((directory) => volume(directory, inWorkspace(directory), true)),
    ...mounts.readOnlyPaths.flatMap((path) => volume(path, inWorkspace(path), false)),
    '--workdir',
    options.cwd,
    ...Object.entries(options.env)
      .sort(([a], [b]) => a.localeCompare(b))
      .flatMap(([name, value]) => ['--env', `${name}=${value}`]),
    options.container.image,
    ...options.command,
  ];
}

/** How the image is made ready: built from the task's Dockerfile, or pulled. */
export function containerImageArguments(
  engine: string,
  source: { dockerfile: string; context: string; tag: string } | { image: string },
): string[] {
  return 'image' in source
    ? [engine, 'pull', source.image]
    : [engine, 'build', '--tag', source.tag, '--file', source.dockerfile, source.context];
}
