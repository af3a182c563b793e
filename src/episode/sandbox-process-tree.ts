import { closeSync, existsSync, openSync, readFileSync, readSync, readdirSync } from 'node:fs';

/** /proc reports CPU times in USER_HZ ticks, which Linux fixes at 100 for user space on every architecture. */
const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcessSnapshot {
  pid: number;
  /** Exited, waiting for its parent to collect it: still holds its CPU time, can no longer be killed. */
  zombie: boolean;
  /** Ticks since boot: with the pid it names one process, even after the pid is reused. */
  startTime: number;
  /** User and system CPU of the process and of the children it has reaped. */
  cpuSeconds: number;
  residentBytes: number;
  /** Its threads, itself included: the kernel's process limit (RLIMIT_NPROC) counts each. */
  threads: number;
}

export type ProcessIdentity = Pick<ProcessSnapshot, 'pid' | 'startTime'>;

/** One process as /proc sees it now, or null when it is gone. */
export function readProcess(pid: number): ProcessSnapshot | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may itself hold spaces and parentheses.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const field = (number: number): number => Number(fields[number - 3]);
  const cpuTicks = field(14) + field(15) + field(16) + field(17);
  return {
    pid,
    zombie: fields[0] === 'Z' || fields[0] === 'X',
    startTime: field(22),
    cpuSeconds: cpuTicks / CLOCK_TICKS_PER_SECOND,
    residentBytes: field(24) * pageSize(),
    threads: field(20),
  };
}

/**
 * The live processes descending from `roots` (roots included), each read before its children: a child reaped
 * during the walk then counts once, in its parent's reaped-children CPU or on its own, never twice. A root given
 * as a snapshot counts only while it is still that process (its pid not reused).
 */
export function readProcessTree(roots: Iterable<number | ProcessIdentity>): ProcessSnapshot[] {
  const childrenOf = childLister();
  const seen = new Set<number>();
  const snapshots: ProcessSnapshot[] = [];
  const queue: Array<number | ProcessIdentity> = [...roots];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const pid = typeof next === 'number' ? next : next.pid;
    if (seen.has(pid)) continue;
    seen.add(pid);
    const snapshot = readProcess(pid);
    if (!snapshot || (typeof next !== 'number' && snapshot.startTime !== next.startTime)) continue;
    snapshots.push(snapshot);
    queue.push(...childrenOf(pid));
  }
  return snapshots;
}

/** Every process whose environment holds `name=value` (it was started by a process that had it). */
export function findProcessesByEnvironment(name: string, value: string): number[] {
  // Entries are NUL-terminated; a leading NUL lets the first entry match like the others.
  const needle = Buffer.from(`\0${name}=${value}\0`);
  const found: number[] = [];
  for (const pid of allPids()) {
    try {
      const environment = Buffer.concat([Buffer.alloc(1), readFileSync(`/proc/${pid}/environ`)]);
      if (environment.includes(needle)) found.push(pid);
    } catch {
      // Gone, or not ours to read: neither can be one of ours.
    }
  }
  return found;
}

/** SIGKILL, ignoring processes that are already gone. */
export function killProcess(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // ESRCH: it exited first.
  }
}

function allPids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/**
 * Children from /proc/<pid>/task/<tid>/children (each thread lists the children it forked), or, on kernels built
 * without that file, from one scan of every process's parent.
 */
function childLister(): (pid: number) => number[] {
  if (hasChildrenFiles()) return childrenFromTaskFiles;
  const childrenByParent = new Map<number, number[]>();
  for (const pid of allPids()) {
    try {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const parent = Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
      childrenByParent.set(parent, [...(childrenByParent.get(parent) ?? []), pid]);
    } catch {
      // Exited during the scan.
    }
  }
  return (pid) => childrenByParent.get(pid) ?? [];
}

function childrenFromTaskFiles(pid: number): number[] {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const children: number[] = [];
  for (const task of tasks) {
    try {
      for (const word of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' ')) {
        if (word.trim() !== '') children.push(Number(word));
      }
    } catch {
      // The thread ended.
    }
  }
  return children;
}

let childrenFilesPresent: boolean | undefined;
function hasChildrenFiles(): boolean {
  childrenFilesPresent ??= existsSync(`/proc/self/task/${process.pid}/children`);
  return childrenFilesPresent;
}

let pageSizeBytes: number | undefined;
/** The kernel's page size (4 KiB on x86-64, up to 64 KiB on some ARM kernels), read once from our own smaps. */
function pageSize(): number {
  if (pageSizeBytes !== undefined) return pageSizeBytes;
  pageSizeBytes = 4096;
  try {
    const fd = openSync('/proc/self/smaps', 'r');
    try {
      const buffer = Buffer.alloc(4096);
      const length = readSync(fd, buffer, 0, buffer.length, null);
      const match = /KernelPageSize:\s+(\d+) kB/.exec(buffer.subarray(0, length).toString('utf8'));
      if (match) pageSizeBytes = Number(match[1]) * 1024;
    } finally {
      closeSync(fd);
    }
  } catch {
    // Keep the common default.
  }
  return pageSizeBytes;
}
