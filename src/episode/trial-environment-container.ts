import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { SystemError } from '../errors.js';
import { writeForwarder } from './forwarder.js';
import {
  COPY_OUT_LIMITS,
  copyOutOfContainer,
  type CopyOutLimits,
  type CopyOutReport,
} from './container-copy-out.js';
import { handBackFiles, type HandBackReport } from './hand-back-files.js';
import { DEFAULT_PROCESS_LIMIT, withDefaultLimits } from './sandbox-limits.js';
import { runProcessTree, type SandboxResult } from './sandbox-run.js';
import { egressEnvironment, RUN_MARKER_VARIABLE } from './sandbox-layout.js';
import {
  TRIAL_EGRESS_PORT,
  TRIAL_EGRESS_SOCKET,
  TRIAL_PROXY_PORT,
  TRIAL_PROXY_SOCKET,
  type TrialCommand,
  type TrialEnvironment,
} from './trial-environment.js';

/** Inside the container: the trial's own host files (the forwarder, a harness's guard), read-only. */
export const CONTAINER_SHARED_INSIDE = '/run/mass-trial';
/**
 * Inside the container: the Node that runs the forwarder, read-only, the file alone. Never its host path, nor its
 * folder: a host Node in /usr/bin would cover the image's own /usr/bin, or show the host's every program inside.
 */
const FORWARDER_NODE_INSIDE = '/run/mass-node/node';
/**
 * Folders of an image's own system, which no host folder may cover (a folder deep inside one, such as a global
 * install's `/usr/lib/node_modules/…`, covers nothing the image needs).
 */
const IMAGE_SYSTEM_FOLDERS = new Set(
  ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/etc', '/opt', '/usr', '/usr/local'].flatMap((folder) => [
    folder,
    ...(folder.startsWith('/usr')
      ? ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libexec', 'share'].map((sub) => `${folder}/${sub}`)
      : []),
  ]),
);
/** Inside the container: the folder of the proxies' sockets, read-only. */
const SOCKETS_INSIDE = '/run/mass-sockets';
/** How long an engine command other than a trial's own may take. */
const ENGINE_TIMEOUT_MS = 120_000;

interface ContainerTrialOptions {
  /** The engine's client (`docker`, a path or a name on PATH). */
  engine: string;
  image: string;
  /** The container's name: derived from the trial, so that a run killed and run again removes what it left. */
  name: string;
  /** A host folder the trial owns (the forwarder, and the staging of files read back). */
  stateDirectory: string;
  /**
   * The run the trial belongs to (its directory), written on the container as the label `mass.run`, beside
   * `mass.trial=1`: `docker ps --filter label=mass.run=<run directory>` lists what one run left.
   */
  run?: string;
  /** Host folders shown read-only at their own paths (a harness and its Node). */
  readableDirectories?: string[];
  /** `[environment.env]`: set in the container for every command. */
  env?: Record<string, string>;
  cpus?: number | null;
  memoryBytes?: number | null;
  /** The Node that runs the forwarder inside (its folder is shown read-only); default this process's. */
  nodePath?: string;
  /** What may come back from the container (`copyOutOfContainer`); default `COPY_OUT_LIMITS`. */
  handBackLimits?: CopyOutLimits;
}

/**
 * A trial's environment as one container of the task's image, Harbor's way: created once with a keep-alive process
 * (the forwarder from the container's loopback to the proxies' sockets), every command then run in it with `exec`
 * (standard input kept open for a harness's prompt) at the image's WORKDIR and as the user the task names, and the
 * files put in and read back with `cp`: no host folder is ever mounted writable, so what root does inside (root in
 * the container holds Docker's default capabilities less NET_RAW, MKNOD, AUDIT_WRITE and SETFCAP, and cannot gain
 * more) never lands on a host path the host later reads or runs; what comes back goes through `handBackFiles`. No
 * network but the relays to the proxies (`--network none`). Between one command and the next the container is
 * restarted when the former may have left processes behind, so that nothing the agent started outlives its turn and
 * meets the verifier; the filesystem is kept.
 */
export class ContainerTrialEnvironment implements TrialEnvironment {
  readonly kind = 'container';
  readonly proxyBaseUrl = `http://127.0.0.1:${TRIAL_PROXY_PORT}`;
  readonly egressProxyUrl = `http://127.0.0.1:${TRIAL_EGRESS_PORT}`;
  /** Whether a command ran since the container last (re)started: its leftovers may still run. */
  private dirty = false;
  private running = true;
  private removed = false;

  private constructor(
    private readonly options: ContainerTrialOptions,
    readonly workdir: string,
    readonly socketDirectory: string,
  ) {}

  /** Creates and starts the container; one left by an earlier run under the same name is removed first. */
  static async create(options: ContainerTrialOptions): Promise<ContainerTrialEnvironment> {
    const { engine, name } = options;
    await engineCommand(engine, ['rm', '--force', name]).catch(() => undefined);
    await mkdir(options.stateDirectory, { recursive: true });
    const shared = join(realpathSync(options.stateDirectory), 'shared');
    await mkdir(shared, { recursive: true });
    await chmod(shared, 0o755);
    // Unix socket paths are limited to 107 bytes: the sockets get a short folder of their own.
    const socketDirectory = await mkdtemp(join(tmpdir(), 'mass-trial-'));
    await chmod(socketDirectory, 0o755);
    writeForwarder(shared);
    const node = realpathSync(options.nodePath ?? process.execPath);
    const relays = [
      { port: TRIAL_PROXY_PORT, socketPath: `${SOCKETS_INSIDE}/${TRIAL_PROXY_SOCKET}` },
      { port: TRIAL_EGRESS_PORT, socketPath: `${SOCKETS_INSIDE}/${TRIAL_EGRESS_SOCKET}` },
    ];
    // The harness's folders are shown at their own paths (its command names them), except a system folder: the host's
    // /usr/bin (where this process's Node may live) would cover the image's own. The forwarder's Node is shown apart,
    // at a path of its own.
    const readable = [
      ...new Set((options.readableDirectories ?? []).map((folder) => realpathSync(folder))),
    ].filter((folder) => !IMAGE_SYSTEM_FOLDERS.has(folder));
    try {
      await engineCommand(engine, [
        'create',
        '--name',
        name,
        '--label',
        'mass.trial=1',
        ...(options.run === undefined ? [] : ['--label', `mass.run=${options.run}`]),
        '--init',
        '--network',
        'none',
        '--security-opt',
        'no-new-privileges',
        ...['NET_RAW', 'MKNOD', 'AUDIT_WRITE', 'SETFCAP'].flatMap((capability) => ['--cap-drop', capability]),
        '--pids-limit',
        String(DEFAULT_PROCESS_LIMIT),
        ...(options.memoryBytes ? ['--memory', String(Math.floor(options.memoryBytes))] : []),
        ...(options.cpus ? ['--cpus', String(options.cpus)] : []),
        ...readable.flatMap((folder) => ['--volume', `${folder}:${folder}:ro`]),
        '--volume',
        `${node}:${FORWARDER_NODE_INSIDE}:ro`,
        '--volume',
        `${shared}:${CONTAINER_SHARED_INSIDE}:ro`,
        '--volume',
        `${socketDirectory}:${SOCKETS_INSIDE}:ro`,
        ...envArguments(options.env ?? {}),
        '--entrypoint',
        FORWARDER_NODE_INSIDE,
        options.image,
        `${CONTAINER_SHARED_INSIDE}/forwarder.mjs`,
        '-',
        JSON.stringify(relays),
      ]);
      await engineCommand(engine, ['start', name]);
      const workdir =
        (await engineCommand(engine, ['inspect', '--format', '{{.Config.WorkingDir}}', name])).trim() || '/';
      return new ContainerTrialEnvironment(options, workdir, socketDirectory);
    } catch (error) {
      await engineCommand(engine, ['rm', '--force', name]).catch(() => undefined);
      await rm(socketDirectory, { recursive: true, force: true });
      throw error;
    }
  }

  /** The trial's own host files, shown read-only inside at `CONTAINER_SHARED_INSIDE`. */
  get sharedDirectory(): { host: string; inside: string } {
    return {
      host: join(realpathSync(this.options.stateDirectory), 'shared'),
      inside: CONTAINER_SHARED_INSIDE,
    };
  }

  async exec(command: TrialCommand): Promise<SandboxResult> {
    await this.fresh();
    this.dirty = true;
    const marker = { name: RUN_MARKER_VARIABLE, value: randomUUID() };
    const egress = existsSync(join(this.socketDirectory, TRIAL_EGRESS_SOCKET))
      ? egressEnvironment(this.egressProxyUrl)
      : {};
    const args = [
      'exec',
      ...(command.stdin === undefined ? [] : ['--interactive']),
      ...(command.user ? ['--user', command.user] : []),
      ...(command.cwd ? ['--workdir', command.cwd] : []),
      ...envArguments({ ...egress, ...command.env }),
      this.options.name,
      ...command.command,
    ];
    // The engine's client runs with the host's environment (DOCKER_HOST…); the command inside gets only what
    // --env gives on top of the image's own.
    const hostEnvironment = Object.fromEntries(
      Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    return runProcessTree({
      executable: this.options.engine,
      args,
      env: { ...hostEnvironment, [marker.name]: marker.value },
      cwd: this.options.stateDirectory,
      ownProcessGroup: true,
      sandboxed: true,
      marker,
      ...(command.stdin === undefined ? {} : { stdin: command.stdin }),
      ...(command.stdout ? { stdout: command.stdout } : {}),
      ...(command.stderr ? { stderr: command.stderr } : {}),
      // The container's own limits bound memory and processes; the client is bounded in time only.
      limits: withDefaultLimits({
        ...(command.limits?.wallClockSeconds === undefined
          ? {}
          : { wallClockSeconds: command.limits.wallClockSeconds }),
      }),
      sampleIntervalMs: 500,
      diskDirectories: [],
      ...(command.signal ? { signal: command.signal } : {}),
    });
  }

  async putFiles(hostFolder: string, inside: string, user?: string | null): Promise<void> {
    await this.fresh();
    // Whatever the agent left there goes first (a reward.json planted in /logs/verifier, reward.txt made a folder so
    // that the verifier's own cannot be written), and the engine, not a program of the image, says it is gone.
    await this.root(['sh', '-c', 'rm -rf -- "$1" && mkdir -p -- "$1"', 'sh', inside]);
    await this.assertEmpty(inside);
    await engineCommand(this.options.engine, ['cp', `${hostFolder}/.`, `${this.options.name}:${inside}`]);
    if (user) await this.root(['chown', '-R', user, inside]);
  }

  async getFiles(inside: string, hostFolder: string): Promise<HandBackReport | null> {
    // Nothing of the trial runs while its files are read.
    if (this.running && this.dirty) await this.stop();
    return this.copiedOut(inside, this.options.handBackLimits ?? COPY_OUT_LIMITS, async (copy, copied) => {
      if (copied === null) return null;
      const report = await handBackFiles(copy, hostFolder);
      return {
        ...report,
        links: [...copied.links, ...report.links],
        leftOut: [...copied.leftOut, ...report.leftOut],
      };
    });
  }

  async remove(): Promise<void> {
    if (this.removed) return;
    this.removed = true;
    await engineCommand(this.options.engine, ['rm', '--force', this.options.name]).catch(() => undefined);
    await rm(this.socketDirectory, { recursive: true, force: true });
  }

  /** A running container with no process of an earlier command left. */
  private async fresh(): Promise<void> {
    if (this.removed) throw new SystemError(`the trial's container ${this.options.name} was removed`);
    if (this.running && !this.dirty) return;
    if (this.running) await this.stop();
    await engineCommand(this.options.engine, ['start', this.options.name]);
    this.running = true;
    this.dirty = false;
  }

  private async stop(): Promise<void> {
    await engineCommand(this.options.engine, ['stop', '--time', '0', this.options.name]);
    this.running = false;
  }

  /** Refuses to go on when `inside` holds anything: the image's own `rm` may be the agent's. */
  private async assertEmpty(inside: string): Promise<void> {
    const limits = { ...COPY_OUT_LIMITS, maxFiles: 0, maxStreamBytes: 1024 * 1024 };
    const found = await this.copiedOut(inside, limits, async (copy, copied) =>
      copied === null
        ? []
        : [...(await readdir(copy)), ...[...copied.links, ...copied.leftOut].map((entry) => entry.path)],
    );
    if (found.length > 0) {
      throw new SystemError(
        `${inside} still held ${found.slice(0, 5).join(', ')} after it was emptied: the image's rm did not remove them`,
      );
    }
  }

  /**
   * `inside` copied out into a staging folder of the trial's (`copyOutOfContainer`: read as a stream within `limits`,
   * since the engine's own cp to a host folder would write a sparse file of any size in full), used, then removed.
   */
  private async copiedOut<T>(
    inside: string,
    limits: CopyOutLimits,
    use: (copy: string, copied: CopyOutReport | null) => Promise<T>,
  ): Promise<T> {
    const staging = await mkdtemp(join(this.options.stateDirectory, 'hand-back-'));
    await chmod(staging, 0o700);
    try {
      const copy = join(staging, 'copy');
      return await use(
        copy,
        await copyOutOfContainer(this.options.engine, this.options.name, inside, copy, limits),
      );
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /** A short command as root inside, failing loudly. */
  private async root(command: string[]): Promise<void> {
    await engineCommand(this.options.engine, ['exec', '--user', '0', this.options.name, ...command]);
  }
}

/** Removes a trial's container by name (a killed run's leftover); nothing when there is none. */
export async function removeTrialContainer(engine: string, name: string): Promise<void> {
  await engineCommand(engine, ['rm', '--force', name]).catch(() => undefined);
}

function envArguments(env: Record<string, string>): string[] {
  return Object.entries(env)
    .sort(([a], [b]) => a.localeCompare(b))
    .flatMap(([name, value]) => ['--env', `${name}=${value}`]);
}

/** One engine command; its standard output, or an error with its last lines. */
function engineCommand(engine: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      engine,
      args,
      { timeout: ENGINE_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (!error) return resolve(String(stdout));
        const tail = String(stderr).trimEnd().split('\n').slice(-5).join('\n');
        reject(new SystemError(`${engine} ${args[0]} failed: ${tail || error.message}`));
      },
    );
  });
}
