import { spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';

import { UserError } from '../errors.js';
import { systemErrorCode } from '../store/system-error-code.js';

export interface LoggedProcessOptions {
  /** The program and its arguments; run without a shell. */
  argv: string[];
  /** What to call the program in errors (`the python trainer`). */
  label: string;
  /** stdout and stderr go here, line by line, appended. */
  logFile: string;
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Values written as `***` wherever they appear in the log (API keys, tokens). */
  secrets?: string[];
  /** Each complete line of stdout, as printed (before redaction). */
  onStdoutLine?: (line: string) => void;
  /** Stops the process: SIGTERM, then SIGKILL after `killGraceMs`. */
  signal?: AbortSignal;
  killGraceMs?: number;
}

export interface ProcessOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * Runs a program with its output streamed to a log file, and waits for it. Refuses a program that cannot be started
 * with an error naming it; an abort stops the program and rethrows the signal's reason.
 */
export async function runLoggedProcess(options: LoggedProcessOptions): Promise<ProcessOutcome> {
  const [program, ...args] = options.argv;
  if (program === undefined || program === '') throw new UserError(`${options.label}: the command is empty`);
  options.signal?.throwIfAborted();
  await mkdir(path.dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const redact = redactor(options.secrets ?? []);
  log.write(`[${new Date().toISOString()}] $ ${redact(options.argv.map(quoteArgument).join(' '))}\n`);

  const child = spawn(program, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    // In the caller's process group, so Ctrl-C in a terminal reaches it too.
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const onAbort = () => {
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), options.killGraceMs ?? 5_000).unref();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const outputs = [
    copyLines(child.stdout, log, redact, options.onStdoutLine),
    copyLines(child.stderr, log, redact),
  ];
  // Awaited below; these handlers only keep a failed start from also reporting an unhandled rejection.
  for (const output of outputs) output.catch(() => undefined);
  try {
    const outcome = await new Promise<ProcessOutcome>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (exitCode, signal) => resolve({ exitCode, signal }));
    });
    await Promise.all(outputs);
    log.write(`[${new Date().toISOString()}] exit ${outcome.exitCode ?? outcome.signal}\n`);
    options.signal?.throwIfAborted();
    return outcome;
  } catch (error) {
    const code = systemErrorCode(error);
    if (code === 'ENOENT' || code === 'EACCES') {
      const missing = options.cwd
        ? `not found, or its working directory ${options.cwd} is missing`
        : 'not found';
      throw new UserError(
        `${options.label}: cannot run "${program}" (${code === 'ENOENT' ? missing : 'not executable'}); ` +
          'give the full path of an installed program',
        { cause: error },
      );
    }
    throw error;
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    await new Promise<void>((resolve) => log.end(resolve));
  }
}

/** The last `count` lines of a log, for error messages. */
export async function logTail(logFile: string, count = 12): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-count).join('\n');
}

async function copyLines(
  stream: Readable,
  log: WriteStream,
  redact: (line: string) => string,
  onLine?: (line: string) => void,
): Promise<void> {
  let pending = '';
  stream.setEncoding('utf8');
  const emit = (line: string) => {
    onLine?.(line);
    log.write(`${redact(line)}\n`);
  };
  for await (const chunk of stream) {
    pending += chunk as string;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) emit(line);
  }
  if (pending !== '') emit(pending);
}

function redactor(secrets: string[]): (text: string) => string {
  const values = secrets.filter((secret) => secret.length > 0);
  return (text) => values.reduce((redacted, secret) => redacted.split(secret).join('***'), text);
}

function quoteArgument(argument: string): string {
  return /^[\w@%+=:,./-]+$/.test(argument) ? argument : `'${argument.replaceAll("'", `'\\''`)}'`;
}
