import { randomInt } from 'node:crypto';
import {
  closeSync,
  lchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { join } from 'node:path';

import { SystemError, errorMessage } from '../errors.js';

/**
 * The host user a sandbox's processes run as when mass runs as root. Agents running as root read every file of the
 * host that the sandbox shows, whatever its mode, and so would other runs' files should any be shown. So each
 * sandbox gets a uid of its own, fresh from a range no account uses: its processes can read only what is readable by
 * everyone or handed over to it, no two sandboxes share one (nor a process count: RLIMIT_NPROC counts per uid), and
 * nothing of the host belongs to it. Inside, bubblewrap's user namespace shows it as `SANDBOX_UID`, so that what the
 * agents see and write (and the records made from it) never names the host uid. When mass does not run as root the
 * sandbox runs as the caller, as unprivileged as the caller already is.
 */
export interface SandboxUser {
  uid: number;
  gid: number;
}

/** 2^31 − 2^24 up to 2^31 − 2^16: above any account, below the uids some tools misread as negative. */
const FIRST_UID = 2 ** 31 - 2 ** 24;
const LAST_UID = 2 ** 31 - 2 ** 16;
/** One file per uid in use, created exclusively: two processes of mass never pick the same one. */
export const SANDBOX_USERS_DIRECTORY = '/tmp/mass-sandbox-users';
const ATTEMPTS = 100;

/** A fresh uid for one sandbox when this process is root; null otherwise (the sandbox runs as the caller). */
export function allocateSandboxUser(): SandboxUser | null {
  if (process.getuid?.() !== 0) return null;
  usersDirectory();
  const taken = accountIds();
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const uid = randomInt(FIRST_UID, LAST_UID);
    if (taken(uid)) continue;
    let fd: number;
    try {
      fd = openSync(join(SANDBOX_USERS_DIRECTORY, String(uid)), 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw new SystemError(
        `cannot reserve a sandbox uid in ${SANDBOX_USERS_DIRECTORY}: ${errorMessage(error)}`,
      );
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return { uid, gid: uid };
  }
  throw new SystemError(`found no free sandbox uid in ${ATTEMPTS} tries; clear ${SANDBOX_USERS_DIRECTORY}`);
}

/**
 * Frees the uid for another sandbox. Called once nothing of the sandbox runs and its files are handed back; after a
 * crash the reservation stays, so that files left owned by the uid never belong to a later sandbox.
 */
export function releaseSandboxUser(user: SandboxUser): void {
  try {
    unlinkSync(join(SANDBOX_USERS_DIRECTORY, String(user.uid)));
  } catch {
    // Already gone.
  }
}

/**
 * Gives the trees under `roots` to the sandbox user, so that it can write its workspace and home: every directory,
 * symbolic link (itself, never its target) and file, except a file with more than one link, which may be shared with
 * a file elsewhere on the host: it stays the caller's (readable, and replaceable by a new file, but not writable in
 * place).
 */
export function handOver(roots: string[], user: SandboxUser): void {
  walk(roots, (path, stat) => {
    if (!stat.isDirectory() && stat.nlink > 1) return;
    lchownSync(path, user.uid, user.gid);
  });
}

/**
 * Gives back to `owner` what the sandbox user owns under `roots`: what was handed over and what the agents made.
 * Only entries owned by the sandbox uid (or its group) change: an inode that uid owns was handed over or made inside
 * (a hard link can only be made to a file the uid could already reach, and the uid is fresh), so no host file can be
 * taken over through a link. Symbolic links are changed themselves and never followed; the kernel clears set-user-ID
 * and set-group-ID bits of files whose owner changes. Entries that vanish or cannot be named (a path past PATH_MAX)
 * are skipped; their count is returned.
 */
export function handBack(roots: string[], user: SandboxUser, owner: { uid: number; gid: number }): number {
  let skipped = 0;
  walk(
    roots,
    (path, stat) => {
      if (stat.uid !== user.uid && stat.gid !== user.gid) return;
      try {
        lchownSync(path, owner.uid, owner.gid);
      } catch {
        skipped++;
      }
    },
    () => skipped++,
  );
  return skipped;
}

/**
 * Every entry under `roots` (roots included), parents before children, without following symbolic links; an
 * explicit stack, so that a deep tree cannot overflow the call stack. Names are bytes: one that is not UTF-8, read as
 * a string, would name another path and its entry would be missed.
 */
function walk(
  roots: string[],
  visit: (path: Buffer, stat: Stats) => void,
  onUnreadable: (path: Buffer) => void = () => undefined,
): void {
  const stack = roots.map((root) => Buffer.from(root)).reverse();
  for (let path = stack.pop(); path !== undefined; path = stack.pop()) {
    let stat: Stats;
    try {
      stat = lstatSync(path);
    } catch {
      onUnreadable(path);
      continue;
    }
    visit(path, stat);
    if (!stat.isDirectory()) continue;
    let names: Buffer[];
    try {
      names = readdirSync(path, { encoding: 'buffer' });
    } catch {
      onUnreadable(path);
      continue;
    }
    for (const name of names.reverse()) stack.push(Buffer.concat([path, SLASH, name]));
  }
}

const SLASH = Buffer.from('/');

/** The directory of reservations: root's alone, so that nobody else can reserve (or block) a uid. */
function usersDirectory(): void {
  mkdirSync(SANDBOX_USERS_DIRECTORY, { recursive: true, mode: 0o700 });
  const stat = lstatSync(SANDBOX_USERS_DIRECTORY);
  if (!stat.isDirectory() || stat.uid !== 0 || (stat.mode & 0o022) !== 0) {
    throw new SystemError(
      `${SANDBOX_USERS_DIRECTORY} must be a directory that only root can write; remove it and run again`,
    );
  }
}

/** Ids the host's accounts and subordinate ranges (/etc/subuid, /etc/subgid) use: never given to a sandbox. */
function accountIds(): (id: number) => boolean {
  const single = new Set<number>();
  const ranges: Array<[number, number]> = [];
  for (const file of ['/etc/passwd', '/etc/group']) {
    for (const line of readLines(file)) {
      const id = Number(line.split(':')[2]);
      if (Number.isInteger(id)) single.add(id);
    }
  }
  for (const file of ['/etc/subuid', '/etc/subgid']) {
    for (const line of readLines(file)) {
      const [, start, count] = line.split(':').map(Number);
      if (Number.isInteger(start) && Number.isInteger(count)) ranges.push([start!, start! + count!]);
    }
  }
  return (id) => single.has(id) || ranges.some(([start, end]) => id >= start && id < end);
}

function readLines(file: string): string[] {
  try {
    return readFileSync(file, 'utf8').split('\n');
  } catch {
    return [];
  }
}
