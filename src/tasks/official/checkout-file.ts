import { constants, type Stats } from 'node:fs';
import { lstat, open, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';

import { UserError } from '../../errors.js';

/**
 * The one way the importer reads a checkout: a regular file inside the checkout's `tasks/` folder, reached through
 * real folders only, of at most `MAX_CHECKOUT_FILE_BYTES`. A path that leaves `tasks/` (after `{task_id}` is put in and
 * `..` folded), a symbolic link (the file or any folder between the checkout and it), and anything but a regular file
 * (a FIFO, a device such as /dev/zero, a socket, a folder) are refused before the file is opened for reading; a file
 * is opened without following a link and without waiting on a writer, and read to at most one byte past the cap.
 */

export const MAX_CHECKOUT_FILE_BYTES = 1024 * 1024;
const TASKS_DIR = 'tasks';

export interface CheckoutFile {
  /** Relative to the checkout, with `/`: `tasks/bare/query11.txt`. */
  relative: string;
  text: string;
  /** The file's permission bits, so that what is made of it is never more readable than it. */
  mode: number;
}

/** A file of the checkout that is not there; the teacher directive may be missing, the others may not. */
export class MissingCheckoutFile extends UserError {}

/**
 * A path inside `tasks/` from a `splits.json` pattern (`bare/query{task_id}.txt`) and a task id, relative to the
 * checkout; refused when the id could change folders or the result leaves `tasks/`.
 */
export function taskFilePath(pattern: string, taskId: string, field: string): string {
  if (taskId === '' || /[/\\\0]|\.\./.test(taskId)) {
    throw new UserError(
      `${TASKS_DIR}/splits.json: task id "${taskId}" holds "/", "\\", ".." or a NUL character; task ids are numbers`,
    );
  }
  const named = pattern.replaceAll('{task_id}', taskId);
  const inside = path.posix.normalize(named);
  if (
    named.includes('\0') ||
    path.isAbsolute(named) ||
    inside === '..' ||
    inside.startsWith('../') ||
    inside === '.'
  ) {
    throw new UserError(
      `${TASKS_DIR}/splits.json: field "${field}" ("${pattern}") gives "${named}" for task ${taskId}, which is not a file inside the checkout's ${TASKS_DIR}/ folder; write a path relative to ${TASKS_DIR}/ that stays inside it, such as bare/query{task_id}.txt`,
    );
  }
  return `${TASKS_DIR}/${inside}`;
}

/** Reads one file of a checkout (`relative` as `taskFilePath` gives it, or `tasks/splits.json`); see above. */
export async function readCheckoutFile(
  checkoutDir: string,
  relative: string,
  what: string,
): Promise<CheckoutFile> {
  const root = await realpath(checkoutDir).catch(() => path.resolve(checkoutDir));
  const parts = relative.split('/');
  if (
    parts[0] !== TASKS_DIR ||
    parts.some((part) => part === '' || part === '.' || part === '..' || part.includes('\0'))
  )
    throw refusal(
      relative,
      what,
      'is not a plain path inside the tasks/ folder',
      'name a file inside tasks/',
    );
  const file = path.join(root, ...parts);
  let folder = root;
  for (const part of parts.slice(0, -1)) {
    folder = path.join(folder, part);
    const stats = await lstatOrNull(folder);
    if (stats === null) throw missing(root, relative, what);
    if (stats.isSymbolicLink())
      throw refusal(
        relative,
        what,
        `lies under ${path.relative(root, folder)}, a symbolic link`,
        'make it a real folder of the checkout',
      );
    if (!stats.isDirectory()) throw missing(root, relative, what);
  }
  const before = await lstatOrNull(file);
  if (before === null) throw missing(root, relative, what);
  checkKind(before, relative, what);
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ELOOP')
        throw refusal(relative, what, 'is a symbolic link', 'replace the link with the file itself');
      if (error.code === 'ENOENT') throw missing(root, relative, what);
      throw error;
    },
  );
  try {
    const opened = await handle.stat();
    checkKind(opened, relative, what);
    if (opened.dev !== before.dev || opened.ino !== before.ino || !(await opensWhereNamed(handle.fd, file))) {
      throw refusal(
        relative,
        what,
        'changed while it was opened',
        'run the import again on a checkout nobody is changing',
      );
    }
    const buffer = Buffer.alloc(MAX_CHECKOUT_FILE_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > MAX_CHECKOUT_FILE_BYTES) throw tooLarge(relative, what);
    return { relative, text: buffer.subarray(0, length).toString('utf8'), mode: opened.mode & 0o777 };
  } finally {
    await handle.close();
  }
}

function checkKind(stats: Stats, relative: string, what: string): void {
  if (stats.isSymbolicLink())
    throw refusal(relative, what, 'is a symbolic link', 'replace the link with the file itself');
  if (!stats.isFile()) {
    const kind = stats.isDirectory()
      ? 'a folder'
      : stats.isFIFO()
        ? 'a FIFO'
        : stats.isSocket()
          ? 'a socket'
          : stats.isCharacterDevice() || stats.isBlockDevice()
            ? 'a device'
            : 'not a regular file';
    throw refusal(relative, what, `is ${kind}, not a regular file`, 'put the text file itself there');
  }
  if (stats.size > MAX_CHECKOUT_FILE_BYTES) throw tooLarge(relative, what);
}

/** Where the system says the opened file lies (Linux names it in /proc); elsewhere, its real folder. */
async function opensWhereNamed(fd: number, file: string): Promise<boolean> {
  const opened = await readlink(`/proc/self/fd/${fd}`).catch(() => null);
  if (opened !== null) return opened === file;
  return (await realpath(path.dirname(file))) === path.dirname(file);
}

async function lstatOrNull(file: string): Promise<Stats | null> {
  try {
    return await lstat(file);
  } catch (error) {
    if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) return null;
    throw error;
  }
}

function refusal(relative: string, what: string, reason: string, todo: string): UserError {
  return new UserError(
    `${relative} (${what}) ${reason}: the importer reads only regular files inside the checkout's ${TASKS_DIR}/ folder, never through a link; ${todo}`,
  );
}

function tooLarge(relative: string, what: string): UserError {
  return refusal(
    relative,
    what,
    `is larger than ${MAX_CHECKOUT_FILE_BYTES / 1024 / 1024} MiB, the most the importer reads of one file`,
    'check that it is the text file meant (official task files are a few kilobytes)',
  );
}

function missing(root: string, relative: string, what: string): MissingCheckoutFile {
  return new MissingCheckoutFile(
    `${path.join(root, relative)}: ${what} is missing. Pass the root of a checkout of the official MASS repository (the folder holding ${TASKS_DIR}/splits.json).`,
  );
}
