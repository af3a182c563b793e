import { spawn } from 'node:child_process';

import { errorMessage } from '../errors.js';

/** How a notification command ended. */
export interface CommandOutcome {
  /** `sent`: it exited 0; `failed`: it could not start or exited otherwise; `timed-out`: it was killed. */
  status: 'sent' | 'failed' | 'timed-out';
  exitCode: number | null;
  error: string | null;
  /** The end of what it wrote to its standard error. */
  stderr: string;
}

export type CommandRunner = (
  command: readonly string[],
  input: string,
  timeoutMs: number,
) => Promise<CommandOutcome>;

const STDERR_KEPT = 2000;

/** The variables a notification command gets: enough to find programs and write text, none of the run's keys. */
const PASSED_ENVIRONMENT = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'USER'];

/**
 * Runs `command` (no shell unless it names one) with `input` on its standard input and a bare environment, killing it
 * past `timeoutMs`; resolves with how it ended, never rejects.
 */
export function runNotifyCommand(
  command: readonly string[],
  input: string,
  timeoutMs: number,
): Promise<CommandOutcome> {
  const environment = Object.fromEntries(
    PASSED_ENVIRONMENT.flatMap((name) =>
      process.env[name] === undefined ? [] : [[name, process.env[name]]],
    ),
  );
  return new Promise((resolve) => {
    let stderr = '';
    let timedOut = false;
    let settled = false;
    const finish = (result: Omit<CommandOutcome, 'stderr'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, stderr: stderr.slice(-STDERR_KEPT) });
    };
    const child = spawn(command[0]!, command.slice(1), {
      env: environment,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-STDERR_KEPT);
    });
    child.stdin!.on('error', () => {
      // A command that does not read its input closes the pipe early: that is its choice, not a failure.
    });
    child.on('error', (error) => finish({ status: 'failed', exitCode: null, error: errorMessage(error) }));
    child.on('close', (code, signal) => {
      if (timedOut) {
        finish({ status: 'timed-out', exitCode: null, error: `killed after ${timeoutMs / 1000} s` });
      } else if (code === 0) finish({ status: 'sent', exitCode: 0, error: null });
      else {
        finish({
          status: 'failed',
          exitCode: code,
          error: signal ? `ended by ${signal}` : `exited with code ${code}`,
        });
      }
    });
    child.stdin!.end(input);
  });
}
