import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The CLI as installed: bin/mass.js runs the compiled dist/, which the end-to-end tier's global setup builds
// (test/support/build-dist.ts).
const entry = fileURLToPath(new URL('../../bin/mass.js', import.meta.url));
const root = fileURLToPath(new URL('../..', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `mass <args>` (bin/mass.js, on dist/); the caller waits on it with `finished`. */
export function startMass(
  args: string[],
  environment: NodeJS.ProcessEnv = {},
): { child: ChildProcess; finished: Promise<CliResult> } {
  const child = spawn(process.execPath, [entry, ...args], {
    cwd: root,
    env: { ...process.env, ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const finished = new Promise<CliResult>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, finished };
}

export function runMass(args: string[], environment?: NodeJS.ProcessEnv): Promise<CliResult> {
  return startMass(args, environment).finished;
}

/** Resolves when the child's stderr has printed text matching `pattern`. */
export function waitForStderr(child: ChildProcess, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new Error(`timed out waiting for ${pattern}; stderr so far: ${seen}`)),
      timeoutMs,
    );
    child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (pattern.test(seen)) {
        clearTimeout(timer);
        resolve(seen);
      }
    });
  });
}
