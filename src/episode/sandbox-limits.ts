import { availableParallelism } from 'node:os';

import { durationMs, timerDelay } from '../timer-duration.js';

import { DEFAULT_DISK_BYTES, DEFAULT_PROCESS_LIMIT, THREADS_PER_PROCESS } from './sandbox-defaults.js';
import { diskUsage } from './sandbox-disk.js';
import { readProcessTree, type ProcessSnapshot } from './sandbox-process-tree.js';

/**
 * Resource limits of one sandboxed run, enforced by a watchdog that samples the process tree from /proc and kills
 * the whole tree once a limit is crossed. Why a watchdog: cgroups are not writable in every container (this
 * machine has a read-only cgroup v1 hierarchy), RLIMIT_AS breaks Node (V8 reserves far more address space than it
 * uses), and rlimits count per process while an agent's work is a tree. The cost: a limit is noticed up to one
 * sample interval late, so a fast allocator can overshoot the memory limit by what it allocates in that time. In a
 * bubblewrap sandbox the kernel backs the process and disk limits up (`kernelLimitArguments`), so that a fork bomb or
 * one huge file is stopped even between two samples.
 */
export interface SandboxLimits {
  /** Seconds from the start; then the tree is killed and the run reports `timedOut`. */
  wallClockSeconds?: number;
  /**
   * User plus system CPU seconds summed over the tree, including children that have already exited. Default (with a
   * wall-clock limit): `defaultCpuSeconds`.
   */
  cpuSeconds?: number;
  /** Resident memory summed over the tree's processes (shared pages count once per process that maps them). */
  memoryBytes?: number;
  /** Processes of the tree alive at once; default `DEFAULT_PROCESS_LIMIT`. */
  processes?: number;
  /**
   * What the workspace, the home and the other writable directories take on disk together (`diskUsage`), measured
   * every few seconds; default `DEFAULT_DISK_BYTES`. Also the largest file a process inside may write (RLIMIT_FSIZE).
   */
  diskBytes?: number;
}

export type SandboxLimitName = 'wall-clock' | 'cpu-time' | 'memory' | 'processes' | 'disk';

export { DEFAULT_DISK_BYTES, DEFAULT_PROCESS_LIMIT, THREADS_PER_PROCESS };

/**
 * The CPU limit a run gets with its wall-clock limit: half the machine's cores kept busy for the whole time. A run
 * may use every core for half its time (training a model, say), but one that keeps the whole machine busy from start
 * to end, starving the episodes beside it, is stopped at half-time. (Every core for the whole time would be no limit
 * at all: the wall-clock limit already bounds that.)
 */
export function defaultCpuSeconds(wallClockSeconds: number): number {
  return wallClockSeconds * Math.max(1, Math.floor(availableParallelism() / 2));
}

/** The limits with the defaults filled in. */
export function withDefaultLimits(limits: SandboxLimits): SandboxLimits {
  const cpuSeconds =
    limits.cpuSeconds ??
    (limits.wallClockSeconds === undefined ? undefined : defaultCpuSeconds(limits.wallClockSeconds));
  return {
    ...limits,
    ...(cpuSeconds === undefined ? {} : { cpuSeconds }),
    processes: limits.processes ?? DEFAULT_PROCESS_LIMIT,
    diskBytes: limits.diskBytes ?? DEFAULT_DISK_BYTES,
  };
}

/** The most threads the kernel lets the sandbox's user run (RLIMIT_NPROC), for a process limit. */
export function threadLimit(processes: number): number {
  return processes * THREADS_PER_PROCESS;
}

/**
 * `prlimit` options that make the kernel refuse what the watchdog would only notice later: a fork past
 * `threadLimit` threads of the sandbox's user (counted in the sandbox's own user namespace, so neither the host's
 * processes nor other sandboxes count), and a file written past the disk limit (the writer gets SIGXFSZ).
 */
export function kernelLimitArguments(limits: SandboxLimits): string[] {
  const args: string[] = [];
  if (limits.processes !== undefined) {
    const threads = threadLimit(limits.processes);
    args.push(`--nproc=${threads}:${threads}`);
  }
  if (limits.diskBytes !== undefined) {
    const bytes = Math.floor(limits.diskBytes);
    args.push(`--fsize=${bytes}:${bytes}`);
  }
  return args;
}

export interface ResourceUsage {
  /** Highest tree CPU seen (CPU of processes that exit between samples may be missed). */
  cpuSeconds: number;
  peakMemoryBytes: number;
  /** Most processes of the tree seen at once. */
  peakProcesses: number;
  /** Most disk the writable directories were measured to take (0 when not measured). */
  peakDiskBytes: number;
}

interface ResourceWatchdogOptions {
  /** The tree's root: bwrap in a sandbox, the command itself without one. */
  rootPid: number;
  limits: SandboxLimits;
  sampleIntervalMs: number;
  /** What the disk limit measures: the writable directories on the host. */
  diskDirectories: string[];
  /** How often the disk is measured; default `DEFAULT_DISK_SAMPLE_INTERVAL_MS`. */
  diskSampleIntervalMs?: number;
  /** Called once, with the first limit crossed. */
  onLimitExceeded: (limit: SandboxLimitName) => void;
}

export const DEFAULT_SAMPLE_INTERVAL_MS = 100;
/** A walk of the workspace costs more than a read of /proc, and disk fills more slowly than memory. */
export const DEFAULT_DISK_SAMPLE_INTERVAL_MS = 2000;

/**
 * Samples the tree under `rootPid` every interval. Processes seen once stay followed after their parent dies (a
 * double fork or `setsid` re-parents them outside the tree when no pid namespace holds them), so that they are
 * both measured and, at the end, killed.
 */
export class ResourceWatchdog {
  private readonly followed = new Map<number, ProcessSnapshot>();
  private readonly timers: NodeJS.Timeout[] = [];
  private cpuSeconds = 0;
  private peakMemoryBytes = 0;
  private peakProcesses = 0;
  private peakDiskBytes = 0;
  private exceeded: SandboxLimitName | null = null;
  private sampled = false;
  private stopped = false;
  private measuringDisk = false;

  constructor(private readonly options: ResourceWatchdogOptions) {}

  start(): void {
    const { limits, sampleIntervalMs } = this.options;
    this.sample();
    this.timers.push(setInterval(() => this.sample(), sampleIntervalMs));
    if (limits.wallClockSeconds !== undefined) {
      const wallClockMs = timerDelay(durationMs(limits.wallClockSeconds, 's'));
      this.timers.push(setTimeout(() => this.exceed('wall-clock'), wallClockMs));
    }
    if (limits.diskBytes !== undefined && this.options.diskDirectories.length > 0) {
      const interval = this.options.diskSampleIntervalMs ?? DEFAULT_DISK_SAMPLE_INTERVAL_MS;
      this.timers.push(setInterval(() => void this.measureDisk(), interval));
    }
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.length = 0;
  }

  get limitExceeded(): SandboxLimitName | null {
    return this.exceeded;
  }

  get usage(): ResourceUsage {
    return {
      cpuSeconds: this.cpuSeconds,
      peakMemoryBytes: this.peakMemoryBytes,
      peakProcesses: this.peakProcesses,
      peakDiskBytes: this.peakDiskBytes,
    };
  }

  /** The tree as it is now, from the root and every process followed so far; zombies excluded. */
  liveProcesses(): ProcessSnapshot[] {
    return this.refresh().filter((process) => !process.zombie);
  }

  sample(): void {
    const tree = this.refresh();
    let cpuSeconds = 0;
    let residentBytes = 0;
    let threads = 0;
    for (const process of tree) {
      cpuSeconds += process.cpuSeconds;
      residentBytes += process.residentBytes;
      threads += process.threads;
    }
    // CPU can leave the sum: a child whose parent ignores SIGCHLD is reaped without adding to its parent's, and
    // outside a pid namespace a daemon re-parented to init is followed only once seen. Keep the highest total.
    this.cpuSeconds = Math.max(this.cpuSeconds, cpuSeconds);
    this.peakMemoryBytes = Math.max(this.peakMemoryBytes, residentBytes);
    this.peakProcesses = Math.max(this.peakProcesses, tree.length);
    const { limits } = this.options;
    if (limits.cpuSeconds !== undefined && this.cpuSeconds > limits.cpuSeconds) this.exceed('cpu-time');
    if (limits.memoryBytes !== undefined && residentBytes > limits.memoryBytes) this.exceed('memory');
    // Zombies count: each holds a pid until it is reaped. A tree at the kernel's thread limit is one whose forks
    // the kernel refuses: a run over its process limit too, although it never had that many processes.
    if (
      limits.processes !== undefined &&
      (tree.length > limits.processes || threads >= threadLimit(limits.processes))
    ) {
      this.exceed('processes');
    }
  }

  /** One measure of the writable directories; skipped while the last one still walks. */
  async measureDisk(): Promise<void> {
    const { limits, diskDirectories } = this.options;
    if (this.measuringDisk || this.stopped || limits.diskBytes === undefined) return;
    this.measuringDisk = true;
    try {
      const bytes = await diskUsage(diskDirectories);
      if (this.stopped) return;
      this.peakDiskBytes = Math.max(this.peakDiskBytes, bytes);
      // Reaching the limit counts: the kernel stops one file at exactly the limit (RLIMIT_FSIZE).
      if (bytes >= limits.diskBytes) this.exceed('disk');
    } finally {
      this.measuringDisk = false;
    }
  }

  private refresh(): ProcessSnapshot[] {
    // The root by bare pid only the first time: once it exits its pid may be reused, while a followed snapshot
    // (pid and start time) cannot be mistaken for another process.
    const roots = this.sampled ? [...this.followed.values()] : [this.options.rootPid];
    this.sampled = true;
    const tree = readProcessTree(roots);
    this.followed.clear();
    for (const process of tree) this.followed.set(process.pid, process);
    return tree;
  }

  private exceed(limit: SandboxLimitName): void {
    if (this.exceeded) return;
    this.exceeded = limit;
    this.options.onLimitExceeded(limit);
  }
}
