import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const holdStepScript = fileURLToPath(new URL('./hold-step.ts', import.meta.url));

export interface HoldingProcess {
  readonly pid: number;
  /** SIGKILL: the process gets no chance to clean up, as in a crash or an out-of-memory kill. */
  kill(): Promise<void>;
}

/** Starts `hold-step.ts` in a separate Node process and resolves once it is inside its step. */
export async function startProcessInsideStep(runsDirectory: string, name: string): Promise<HoldingProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', holdStepScript, runsDirectory, name], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForLine(child, 'inside-step');
  const pid = child.pid;
  if (pid === undefined) throw new Error('the child process has no pid');
  return {
    pid,
    async kill() {
      const exited = once(child, 'exit');
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** The pid of a process that has already exited, for locks whose holder is gone. */
export async function pidOfExitedProcess(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await once(child, 'exit');
  if (child.pid === undefined) throw new Error('the child process has no pid');
  return child.pid;
}

function waitForLine(child: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.split('\n').includes(line)) resolve();
    });
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => reject(new Error(`child exited (${code}) before "${line}": ${stderr}`)));
  });
}
