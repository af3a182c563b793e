import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { z } from 'zod';

import { SystemError, UserError } from '../errors.js';
import { temporaryPathFor } from './atomic-write.js';
import { systemErrorCode } from './system-error-code.js';

export const LockOwner = z.object({
  pid: z.number().int().positive(),
  hostname: z.string(),
  /** Tells this holder's lock from a later one taken by a process that got the same pid. */
  token: z.string(),
  /** The kernel's start time of the holder, where known: a pid reused by another process does not match. */
  processStartTime: z.string().optional(),
  acquiredAt: z.string(),
  command: z.string().optional(),
});
export type LockOwner = z.infer<typeof LockOwner>;

export interface RunLock {
  readonly path: string;
  readonly owner: LockOwner;
  /** Removes the lock file if it is still ours; safe to call more than once. */
  release(): void;
}

interface AcquireRunLockOptions {
  /** Shown to a second command that finds the lock taken, e.g. `mass search`. */
  command?: string;
}

const maximumTakeoverAttempts = 3;

/**
 * Takes the lock file at `path`, so that two mass commands never work on one run at once. A lock left by
 * a process that no longer exists (killed, crashed) is taken over; a live holder is refused with a
 * UserError naming it.
 */
export function acquireRunLock(path: string, options: AcquireRunLockOptions = {}): RunLock {
  const owner: LockOwner = {
    pid: process.pid,
    hostname: hostname(),
    token: randomBytes(12).toString('hex'),
    processStartTime: processStartTime(process.pid),
    acquiredAt: new Date().toISOString(),
    command: options.command,
  };
  for (let attempt = 0; attempt < maximumTakeoverAttempts; attempt++) {
    if (tryCreateLock(path, owner)) return heldLock(path, owner);
    const holder = readLockOwner(path);
    if (holder === undefined) continue;
    if (isAlive(holder)) throw new UserError(describeLiveHolder(path, holder));
    takeOverStaleLock(path, holder);
  }
  throw new SystemError(`${path}: could not take the run lock; other mass commands keep competing for it.`);
}

// Writing the content first and then linking it into place means nobody ever sees a half-written lock.
function tryCreateLock(path: string, owner: LockOwner): boolean {
  const temporaryPath = temporaryPathFor(path);
  writeFileSync(temporaryPath, `${JSON.stringify(owner, null, 2)}\n`);
  try {
    linkSync(temporaryPath, path);
    return true;
  } catch (error) {
    if (systemErrorCode(error) === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(temporaryPath, { force: true });
  }
}

function heldLock(path: string, owner: LockOwner): RunLock {
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    process.removeListener('exit', release);
    if (readLockOwner(path)?.token === owner.token) rmSync(path, { force: true });
  };
  // A command that ends without closing its run (an uncaught error, process.exit) still frees the run.
  process.on('exit', release);
  return { path, owner, release };
}

/** The current holder of the lock at `path`, or undefined if there is no lock file. */
export function readLockOwner(path: string): LockOwner | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (systemErrorCode(error) === 'ENOENT') return undefined;
    throw error;
  }
  const owner = decodeLockOwner(text);
  if (owner === undefined) {
    throw new UserError(
      `${path} is corrupt: it is not a mass lock file. If no mass command is working on this run, delete it.`,
    );
  }
  return owner;
}

function decodeLockOwner(text: string): LockOwner | undefined {
  let decoded: unknown;
  try {
    decoded = JSON.parse(text);
  } catch {
    return undefined;
  }
  const result = LockOwner.safeParse(decoded);
  return result.success ? result.data : undefined;
}

/** Whether the lock's holder still runs; a holder on another host counts as alive (it cannot be checked from here). */
export function isAlive(holder: LockOwner): boolean {
  // A process on another machine sharing this file system cannot be checked from here.
  if (holder.hostname !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    if (systemErrorCode(error) !== 'EPERM') return false;
  }
  if (holder.processStartTime === undefined) return true;
  const currentStartTime = processStartTime(holder.pid);
  return currentStartTime === undefined || currentStartTime === holder.processStartTime;
}

/**
 * Moves the stale lock aside before deleting it. Two processes may both judge the same lock stale; the
 * move is atomic, and whoever finds it moved a different (fresh) lock puts that one back.
 */
function takeOverStaleLock(path: string, staleHolder: LockOwner): void {
  const asidePath = `${temporaryPathFor(path)}.stale`;
  try {
    renameSync(path, asidePath);
  } catch (error) {
    if (systemErrorCode(error) === 'ENOENT') return;
    throw error;
  }
  try {
    const movedHolder = decodeLockOwner(readFileSync(asidePath, 'utf8'));
    if (movedHolder !== undefined && movedHolder.token !== staleHolder.token) linkSync(asidePath, path);
  } catch (error) {
    if (systemErrorCode(error) !== 'EEXIST') throw error;
  } finally {
    rmSync(asidePath, { force: true });
  }
}

function describeLiveHolder(path: string, holder: LockOwner): string {
  const command = holder.command === undefined ? 'another mass command' : `"${holder.command}"`;
  const where =
    holder.hostname === hostname() ? `pid ${holder.pid}` : `pid ${holder.pid} on host ${holder.hostname}`;
  return (
    `this run is in use by ${command} (${where}, since ${holder.acquiredAt}). Wait for it to finish or ` +
    `stop it; if that process is gone, delete ${path}.`
  );
}

/** Field 22 of /proc/<pid>/stat (Linux only): with the pid, it identifies one process across pid reuse. */
function processStartTime(pid: number): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may itself contain spaces or parentheses.
  const fieldsAfterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fieldsAfterName[19];
}
