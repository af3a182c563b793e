import { createHmac, timingSafeEqual } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { inspect } from 'node:util';

import { UserError } from '../errors.js';

/** The variable holding the secret that the coordinator and its workers share, where no file names it. */
export const QUEUE_SECRET_VARIABLE = 'MASS_QUEUE_SECRET';
/** 32 characters: 128 bits as hex, the least a guess-proof key needs. */
export const MINIMUM_SECRET_LENGTH = 32;
/** A secret file is a line of text; anything larger is the wrong file. */
const MAXIMUM_SECRET_FILE_BYTES = 4096;
const HOW_TO_MAKE_ONE = 'e.g. `openssl rand -hex 32`';

/**
 * The key that signs the queue's jobs. It never leaves this process: it prints as `[queue secret]` in logs, errors and
 * JSON, and Redis holds only what it signs.
 */
export class QueueSecret {
  readonly #key: Buffer;

  constructor(text: string) {
    this.#key = Buffer.from(text, 'utf8');
  }

  /** HMAC-SHA256 of `text`, hex. */
  sign(text: string): string {
    return createHmac('sha256', this.#key).update(text, 'utf8').digest('hex');
  }

  /** Whether `signature` (hex) is this secret's of `text`, in time that does not depend on where they differ. */
  verify(text: string, signature: string): boolean {
    const expected = Buffer.from(this.sign(text), 'hex');
    const given = Buffer.from(signature, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  toString(): string {
    return '[queue secret]';
  }

  toJSON(): string {
    return '[queue secret]';
  }

  [inspect.custom](): string {
    return '[queue secret]';
  }
}

export interface QueueSecretSource {
  /** A file holding the secret (absolute path), instead of the environment variable. */
  file?: string;
  /** Where a file is named, for messages: `--secret-file` on a worker, `execution.secretFile` on a coordinator. */
  fileSetting: string;
}

let fromEnvironment: QueueSecret | undefined;

/**
 * The queue's secret, from the file the command line or configuration names, else from `MASS_QUEUE_SECRET`. A
 * variable read is then removed from this process's environment, so that nothing it starts (task generators and
 * graders run with the environment) inherits it; the value is kept for later calls in the same process.
 */
export function readQueueSecret(source: QueueSecretSource): QueueSecret {
  if (source.file !== undefined) return new QueueSecret(secretFromFile(source.file, source.fileSetting));
  if (fromEnvironment) return fromEnvironment;
  const text = process.env[QUEUE_SECRET_VARIABLE];
  if (text === undefined || text.trim() === '') {
    throw new UserError(
      `the episode queue needs a secret shared by the coordinator and its workers, and none is given: export ${QUEUE_SECRET_VARIABLE}=<at least ${MINIMUM_SECRET_LENGTH} characters, ${HOW_TO_MAKE_ONE}> here and on every worker, or name a file holding it with ${source.fileSetting}`,
    );
  }
  checkLength(text.trim(), QUEUE_SECRET_VARIABLE);
  fromEnvironment = new QueueSecret(text.trim());
  delete process.env[QUEUE_SECRET_VARIABLE];
  return fromEnvironment;
}

/** The file's text, refused unless it is a small regular file only its owner can read. */
function secretFromFile(file: string, setting: string): string {
  if (!isAbsolute(file)) {
    throw new UserError(`${setting} ${file}: name the secret's file by its absolute path`);
  }
  let descriptor: number;
  try {
    descriptor = openSync(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UserError(
      `${setting} ${file}: cannot read it (${code ?? 'error'}); it should hold the queue's secret (${HOW_TO_MAKE_ONE})`,
    );
  }
  try {
    const stat = fstatSync(descriptor);
    if (!stat.isFile())
      throw new UserError(`${setting} ${file}: not a file; name the file holding the secret`);
    if ((stat.mode & 0o077) !== 0) {
      throw new UserError(
        `${setting} ${file}: others can read it (mode ${(stat.mode & 0o777).toString(8)}); chmod 600 ${file}`,
      );
    }
    if (stat.size > MAXIMUM_SECRET_FILE_BYTES) {
      throw new UserError(
        `${setting} ${file}: ${stat.size} bytes, not a secret's line of text; name the file holding only the secret`,
      );
    }
    const buffer = Buffer.alloc(MAXIMUM_SECRET_FILE_BYTES + 1);
    const length = readSync(descriptor, buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, length).toString('utf8').trim();
    checkLength(text, `${setting} ${file}`);
    return text;
  } finally {
    closeSync(descriptor);
  }
}

function checkLength(text: string, where: string): void {
  if (text.length < MINIMUM_SECRET_LENGTH) {
    throw new UserError(
      `${where}: the queue's secret has ${text.length} characters; use at least ${MINIMUM_SECRET_LENGTH} (${HOW_TO_MAKE_ONE})`,
    );
  }
}
