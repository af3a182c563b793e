import { spawn, type ChildProcess, type StdioNull, type StdioPipe } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

import { SystemError, errorMessage } from '../errors.js';
import { ResourceWatchdog, type SandboxLimitName, type SandboxLimits } from './sandbox-limits.js';
import { findProcessesByEnvironment, killProcess } from './sandbox-process-tree.js';

/** Where a stream of the command goes: a file (written by the command directly, never through this process) or a callback per chunk. */
export type OutputSink = { file: string } | { onData: (chunk: Buffer) => void };

export interface SandboxResult {
  /** The command's exit code; inside a sandbox a command killed by a signal exits 128 + the signal's number. */
  exitCode: number | null;
  /** Set when this process killed the run (a limit, an abort): then `SIGKILL`. */
  signal: NodeJS.Signals | null;
  /** The wall-clock limit was reached. */
  timedOut: boolean;
  limitExceeded: SandboxLimitName | null;
  /** The caller's abort signal fired. */
  aborted: boolean;
  /**
   * Whether the command itself was started: false when the sandbox's own set-up failed before it (bubblewrap, the
   * kernel's limits, the proxy forwarder), whatever the exit code then says. Absent where it is not told (a container,
   * no sandbox).
   */
  started?: boolean;
  sandboxed: boolean;
  startedAt: string;
  wallSeconds: number;
  /** Sampled: see `ResourceUsage`. */
  cpuSeconds: number;
  peakMemoryBytes: number;
  peakProcesses: number;
  peakDiskBytes: number;
}

export interface ProcessTreeRun {
  executable: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  /** Give the command its own process group, killed as one (without a sandbox: there is no namespace to kill). */
  ownProcessGroup: boolean;
  sandboxed: boolean;
  /** An environment variable set for this run only: every process started inside inherits it, which finds
   * daemons that left the tree, unless they cleared their environment. */
  marker: { name: string; value: string };
  stdin?: string;
  stdout?: OutputSink;
  stderr?: OutputSink;
  limits: SandboxLimits;
  sampleIntervalMs: number;
  /** Host directories the disk limit measures. */
  diskDirectories: string[];
  signal?: AbortSignal;
  /**
   * The command line's last launcher writes a byte on its descriptor 3 just before it execs the command
   * (`reportStart`): the result's `started` says whether one came.
   */
  reportsStart?: boolean;
}

/**
 * `command` behind a prologue that writes a byte on descriptor 3 (a pipe `runProcessTree` reads with `reportsStart`),
 * closes it, and execs the command: the byte says that everything before it (a sandbox's set-up) went well. A command
 * whose start could not be reported is not run (exit 125), so a sandbox opened again never runs it twice. The command
 * never holds the descriptor.
 */
export function reportStart(command: string[]): string[] {
  return ['/bin/sh', '-c', 'printf s >&3 || exit 125; exec 3>&-; exec "$@"', 'mass-start', ...command];
}

/** How many times a sandbox is opened for one command when its own set-up fails before the command starts. */
export const SANDBOX_OPENINGS = 2;

/** How long to wait, once the tree is dead, for its output pipes to close. */
const OUTPUT_DRAIN_MS = 2_000;

/** Runs one command as a process tree under the limits, and kills every process of the tree at the end. */
export async function runProcessTree(run: ProcessTreeRun): Promise<SandboxResult> {
  const startedAt = new Date();
  const started = performance.now();
  const stdout = new Output(run.stdout);
  const stderr = new Output(run.stderr);
  let child: ChildProcess;
  try {
    child = spawn(run.executable, run.args, {
      cwd: run.cwd,
      env: run.env,
      stdio: [
        run.stdin === undefined ? 'ignore' : 'pipe',
        stdout.stdio,
        stderr.stdio,
        ...(run.reportsStart ? (['pipe'] as const) : []),
      ],
      detached: run.ownProcessGroup,
    });
  } finally {
    stdout.afterSpawn();
    stderr.afterSpawn();
  }
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.once('exit', (code, signal) => resolve([code, signal])),
  );
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) =>
      reject(new SystemError(`cannot start ${run.executable}: ${errorMessage(error)}`, { cause: error })),
    );
  });
  child.on('error', () => {
    // After a successful spawn only a failed kill can emit here, and the tree kill checks for itself.
  });
  stdout.attach(child.stdout);
  stderr.attach(child.stderr);
  let commandStarted = false;
  const startReport = run.reportsStart ? (child.stdio[3] as Readable | null) : null;
  startReport?.on('data', () => (commandStarted = true));
  startReport?.on('error', () => {
    // Nothing to read any more: what came is what counts.
  });
  if (run.stdin !== undefined && child.stdin) {
    child.stdin.on('error', () => {
      // The command exited or closed its input without reading it all: not an error of the run.
    });
    child.stdin.end(run.stdin);
  }

  const rootPid = child.pid!;
  let childExited = false;
  const killTree = async (): Promise<void> => {
    if (!childExited && !run.ownProcessGroup) {
      // bwrap first: the sandbox dies with it (--die-with-parent), and the run then reports bwrap's SIGKILL
      // rather than the exit status bwrap would pass on had its init been killed before it.
      killProcess(rootPid);
      await sleep(5);
    }
    for (let round = 0; ; round++) {
      const survivors = new Set([
        ...watchdog.liveProcesses().map((process) => process.pid),
        ...findProcessesByEnvironment(run.marker.name, run.marker.value),
      ]);
      if (!childExited) survivors.add(rootPid);
      if (survivors.size === 0) return;
      if (round === 50) {
        throw new SystemError(`processes ${[...survivors].join(', ')} of ${run.executable} survived SIGKILL`);
      }
      if (run.ownProcessGroup) killProcess(-rootPid);
      for (const pid of survivors) killProcess(pid);
      await sleep(Math.min(5 * (round + 1), 50));
    }
  };
  // Kills started before the command exits are awaited after it; their failure is kept until then.
  const killing: Array<Promise<unknown>> = [];
  const startKilling = (): void => {
    killing.push(killTree().catch((error: unknown) => error));
  };
  const watchdog = new ResourceWatchdog({
    rootPid,
    limits: run.limits,
    sampleIntervalMs: run.sampleIntervalMs,
    diskDirectories: run.diskDirectories,
    onLimitExceeded: startKilling,
  });
  watchdog.start();
  let aborted = false;
  const abort = (): void => {
    aborted = true;
    startKilling();
  };
  if (run.signal?.aborted) abort();
  run.signal?.addEventListener('abort', abort);

  let exitCode: number | null;
  let signal: NodeJS.Signals | null;
  try {
    [exitCode, signal] = await exited;
    childExited = true;
    watchdog.stop();
    const failure = (await Promise.all(killing)).find((outcome) => outcome instanceof Error);
    if (failure) throw failure;
    await killTree();
    // The drain timer is cancelled once the pipes close: left running, it would keep the process alive.
    const drainTimer = new AbortController();
    const drained = await Promise.race([
      closed.then(() => true),
      sleep(OUTPUT_DRAIN_MS, false, { signal: drainTimer.signal }).catch(() => false),
    ]);
    drainTimer.abort();
    if (!drained) for (const stream of [child.stdout, child.stderr, startReport]) stream?.destroy();
  } finally {
    watchdog.stop();
    run.signal?.removeEventListener('abort', abort);
  }
  const limitExceeded = watchdog.limitExceeded;
  return {
    exitCode,
    signal,
    timedOut: limitExceeded === 'wall-clock',
    limitExceeded,
    aborted,
    ...(run.reportsStart ? { started: commandStarted } : {}),
    sandboxed: run.sandboxed,
    startedAt: startedAt.toISOString(),
    wallSeconds: (performance.now() - started) / 1000,
    ...watchdog.usage,
  };
}

/** One output stream of the command: a file descriptor handed to the child, a pipe to a callback, or nothing. */
class Output {
  readonly stdio: StdioNull | StdioPipe | number;
  private fd: number | null = null;

  constructor(private readonly sink: OutputSink | undefined) {
    if (sink === undefined) {
      this.stdio = 'ignore';
    } else if ('file' in sink) {
      mkdirSync(dirname(sink.file), { recursive: true });
      this.fd = openSync(sink.file, 'w');
      this.stdio = this.fd;
    } else {
      this.stdio = 'pipe';
    }
  }

  /** The child holds its own copy of the file descriptor now. */
  afterSpawn(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  attach(stream: Readable | null): void {
    if (stream && this.sink && 'onData' in this.sink) stream.on('data', this.sink.onData);
  }
}
