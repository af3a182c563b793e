import { readProcessTree, type ProcessSnapshot } from './sandbox-process-tree.js';

/**
 * Resource limits of one sandboxed run, enforced by a watchdog that samples the process tree from /proc and kills
 * the whole tree once a limit is crossed. Why a watchdog: cgroups are not writable in every container (this
 * machine has a read-only cgroup v1 hierarchy), RLIMIT_AS breaks Node (V8 reserves far more address space than it
 * uses), and rlimits count per process while an agent's work is a tree. The cost: a limit is noticed up to one
 * sample interval late, so a fast allocator can overshoot the memory limit by what it allocates in that time.
 */
export interface SandboxLimits {
  /** Seconds from the start; then the tree is killed and the run reports `timedOut`. */
  wallClockSeconds?: number;
  /** User plus system CPU seconds summed over the tree, including children that have already exited. */
  cpuSeconds?: number;
  /** Resident memory summed over the tree's processes (shared pages count once per process that maps them). */
  memoryBytes?: number;
}

export type SandboxLimitName = 'wall-clock' | 'cpu-time' | 'memory';

export interface ResourceUsage {
  /** Highest tree CPU seen (CPU of processes that exit between samples may be missed). */
  cpuSeconds: number;
  peakMemoryBytes: number;
}

export interface ResourceWatchdogOptions {
  /** The tree's root: bwrap in a sandbox, the command itself without one. */
  rootPid: number;
  limits: SandboxLimits;
  sampleIntervalMs: number;
  /** Called once, with the first limit crossed. */
  onLimitExceeded: (limit: SandboxLimitName) => void;
}

export const DEFAULT_SAMPLE_INTERVAL_MS = 100;

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
  private exceeded: SandboxLimitName | null = null;
  private sampled = false;

  constructor(private readonly options: ResourceWatchdogOptions) {}

  start(): void {
    const { limits, sampleIntervalMs } = this.options;
    this.sample();
    this.timers.push(setInterval(() => this.sample(), sampleIntervalMs));
    if (limits.wallClockSeconds !== undefined) {
      this.timers.push(setTimeout(() => this.exceed('wall-clock'), limits.wallClockSeconds * 1000));
    }
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.length = 0;
  }

  get limitExceeded(): SandboxLimitName | null {
    return this.exceeded;
  }

  get usage(): ResourceUsage {
    return { cpuSeconds: this.cpuSeconds, peakMemoryBytes: this.peakMemoryBytes };
  }

  /** The tree as it is now, from the root and every process followed so far; zombies excluded. */
  liveProcesses(): ProcessSnapshot[] {
    return this.refresh().filter((process) => !process.zombie);
  }

  sample(): void {
    const tree = this.refresh();
    let cpuSeconds = 0;
    let residentBytes = 0;
    for (const process of tree) {
      cpuSeconds += process.cpuSeconds;
      residentBytes += process.residentBytes;
    }
    // CPU can leave the sum: a child whose parent ignores SIGCHLD is reaped without adding to its parent's, and
    // outside a pid namespace a daemon re-parented to init is followed only once seen. Keep the highest total.
    this.cpuSeconds = Math.max(this.cpuSeconds, cpuSeconds);
    this.peakMemoryBytes = Math.max(this.peakMemoryBytes, residentBytes);
    const { limits } = this.options;
    if (limits.cpuSeconds !== undefined && this.cpuSeconds > limits.cpuSeconds) this.exceed('cpu-time');
    if (limits.memoryBytes !== undefined && residentBytes > limits.memoryBytes) this.exceed('memory');
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
