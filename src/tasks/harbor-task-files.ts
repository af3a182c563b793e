import { constants, createWriteStream } from 'node:fs';
import { lstat, mkdir, open, readdir } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';

import { UserError } from '../errors.js';
import { entryKind, errorCode, walkedEntry } from './walked-entry.js';

/**
 * What a Harbor task may hold. A dataset is code and text from elsewhere: its files reach the agent's workspace, the
 * prompt, the proxy log, training data and the verifier's folder, so none of them may lead to a file of the host (a
 * link), block or reach a device (a special file), or fill the disk. A task breaking one of these is skipped with the
 * path and the reason; the rest of its dataset runs.
 */
export const HARBOR_FILE_LIMITS = {
  /** task.toml and instruction.md, each. */
  maxTextBytes: 256 * 1024,
  /** Per folder (`environment/`, `tests/`, `solution/`): entries, bytes of one file, bytes of all. */
  folders: {
    environment: { maxEntries: 10_000, maxFileBytes: 256 * 1024 ** 2, maxTotalBytes: 1024 ** 3 },
    tests: { maxEntries: 10_000, maxFileBytes: 64 * 1024 ** 2, maxTotalBytes: 256 * 1024 ** 2 },
    solution: { maxEntries: 10_000, maxFileBytes: 64 * 1024 ** 2, maxTotalBytes: 256 * 1024 ** 2 },
  },
} as const;

export type HarborFolder = keyof typeof HARBOR_FILE_LIMITS.folders;

/** A task refused for what its folder holds: the benchmark lists it as skipped, with this reason, and runs the rest. */
export class UnsafeHarborTask extends UserError {
  constructor(
    readonly taskDir: string,
    readonly reason: string,
  ) {
    super(`${taskDir}: ${reason}`);
  }
}

/**
 * A file of the task read as text: only when `lstat` says it is a regular file of at most `maxBytes`, opened with
 * `O_NOFOLLOW` (and `O_NONBLOCK`, so that a FIFO put in its place cannot block), and only if the file opened is the one
 * inspected. Null when there is no such file; an `UnsafeHarborTask` when it is a link, a special file or too big.
 */
export async function readTaskText(
  taskDir: string,
  relative: string,
  maxBytes: number = HARBOR_FILE_LIMITS.maxTextBytes,
): Promise<string | null> {
  const file = path.join(taskDir, relative);
  let inspected;
  try {
    inspected = await lstat(file, { bigint: true });
  } catch {
    return null;
  }
  if (!inspected.isFile()) {
    throw new UnsafeHarborTask(
      taskDir,
      `${file} is ${entryKind(inspected)}, not a file: it is never followed or read`,
    );
  }
  if (inspected.size > BigInt(maxBytes)) {
    throw new UnsafeHarborTask(taskDir, `${file} holds ${inspected.size} bytes, over the ${maxBytes} read`);
  }
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(
    (error: unknown) => {
      throw new UnsafeHarborTask(taskDir, `${file} could not be opened (${errorCode(error)})`);
    },
  );
  try {
    const opened = await handle.stat({ bigint: true });
    if (!opened.isFile() || opened.ino !== inspected.ino || opened.dev !== inspected.dev) {
      throw new UnsafeHarborTask(taskDir, `${file} changed while it was read`);
    }
    const buffer = Buffer.alloc(maxBytes + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    if (bytesRead > maxBytes) {
      throw new UnsafeHarborTask(taskDir, `${file} grew past the ${maxBytes} bytes read`);
    }
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Copies one regular file of the task (`relative` to its folder) to `destination`, as `readTaskText` opens it: only
 * when `lstat` says it is a regular file, with `O_NOFOLLOW`, and only the file inspected. A link or special file put
 * there after the task was loaded refuses the task.
 */
export async function copyTaskFile(taskDir: string, relative: string, destination: string): Promise<void> {
  const file = path.join(taskDir, relative);
  const inspected = await lstat(file, { bigint: true });
  if (!inspected.isFile()) {
    throw new UnsafeHarborTask(
      taskDir,
      `${file} is ${entryKind(inspected)}, not a file: it is never followed or read`,
    );
  }
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const opened = await handle.stat({ bigint: true });
    if (!opened.isFile() || opened.ino !== inspected.ino || opened.dev !== inspected.dev) {
      throw new UnsafeHarborTask(taskDir, `${file} changed while it was copied`);
    }
    await mkdir(path.dirname(destination), { recursive: true });
    await pipeline(
      handle.createReadStream({ autoClose: false }),
      createWriteStream(destination, { flags: 'wx' }),
    );
  } finally {
    await handle.close();
  }
}

/**
 * The regular files of one of the task's folders, relative to it and sorted; [] when the task has no such folder.
 * Refuses the task (an `UnsafeHarborTask` naming the path) when the folder itself or anything in it is a symbolic
 * link or a special file (FIFO, socket, device), or when its files pass the folder's limits.
 */
export async function inspectTaskFolder(taskDir: string, folder: HarborFolder): Promise<string[]> {
  const limits = HARBOR_FILE_LIMITS.folders[folder];
  const root = path.join(taskDir, folder);
  let rootStats;
  try {
    rootStats = await lstat(root);
  } catch {
    return [];
  }
  if (!rootStats.isDirectory()) {
    const what = rootStats.isFile() ? 'a file' : entryKind(rootStats);
    throw new UnsafeHarborTask(taskDir, `${root} is ${what}, not a folder: it is never followed or read`);
  }
  const files: string[] = [];
  let entries = 0;
  let totalBytes = 0;
  const pending = [''];
  for (let relative = pending.pop(); relative !== undefined; relative = pending.pop()) {
    let names: Buffer[];
    try {
      names = await readdir(path.join(root, relative), { encoding: 'buffer' });
    } catch (error) {
      throw new UnsafeHarborTask(
        taskDir,
        `${path.join(root, relative)} could not be listed (${errorCode(error)})`,
      );
    }
    for (const raw of names) {
      const entry = await walkedEntry(root, relative, raw);
      const where = path.join(root, entry.path);
      if ('reason' in entry) throw new UnsafeHarborTask(taskDir, `${where}: ${entry.reason}`);
      if (++entries > limits.maxEntries) {
        throw new UnsafeHarborTask(taskDir, `${root} holds more than ${limits.maxEntries} entries`);
      }
      const { stats } = entry;
      if (stats.isDirectory()) {
        pending.push(entry.path);
      } else if (stats.isFile()) {
        const size = Number(stats.size);
        if (size > limits.maxFileBytes) {
          throw new UnsafeHarborTask(
            taskDir,
            `${where} holds ${size} bytes, over the ${limits.maxFileBytes} a file of ${folder}/ may`,
          );
        }
        totalBytes += size;
        if (totalBytes > limits.maxTotalBytes) {
          throw new UnsafeHarborTask(
            taskDir,
            `${root} holds more than the ${limits.maxTotalBytes} bytes its files may together`,
          );
        }
        files.push(entry.path);
      } else {
        throw new UnsafeHarborTask(
          taskDir,
          `${where} is ${entryKind(stats)}: a task's files are folders and regular files only, never followed or read`,
        );
      }
    }
  }
  return files.sort();
}
