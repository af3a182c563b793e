import { execFile } from 'node:child_process';

import { timerDelay } from '../timer-duration.js';

/**
 * The Python that runs generators, graders and agents' code: Debian's, which has numpy, pandas, matplotlib, scipy and
 * scikit-learn. The first `python3` on PATH may be another interpreter without them, so never rely on PATH.
 * Override with MASS_PYTHON.
 */
export function pythonExecutable(): string {
  return process.env.MASS_PYTHON ?? '/usr/bin/python3';
}

/** Environment for every Python process we start: reproducible, headless, single-threaded maths, no bytecode litter. */
export function pythonEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['PYTHONPATH', 'PYTHONHOME', 'PYTHONSTARTUP', 'PYTHONUSERBASE'])
    delete environment[name];
  return {
    ...environment,
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONHASHSEED: '0',
    PYTHONNOUSERSITE: '1',
    MPLBACKEND: 'Agg',
    OMP_NUM_THREADS: '1',
    OPENBLAS_NUM_THREADS: '1',
    MKL_NUM_THREADS: '1',
    ...extra,
  };
}

export interface PythonRun {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  durationMs: number;
}

export interface PythonRunOptions {
  cwd: string;
  timeoutMs: number;
  environment?: Record<string, string>;
}

/** Runs `<python> ...args`; resolves with the outcome (a non-zero exit is an outcome, not an exception). */
export function runPython(args: string[], options: PythonRunOptions): Promise<PythonRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      pythonExecutable(),
      args,
      {
        cwd: options.cwd,
        env: pythonEnvironment(options.environment),
        timeout: timerDelay(options.timeoutMs),
        killSignal: 'SIGKILL',
        maxBuffer: 32 * 1024 * 1024,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        const failure = error as
          (NodeJS.ErrnoException & { killed?: boolean; signal?: NodeJS.Signals }) | null;
        const exitCode = failure ? (typeof failure.code === 'number' ? failure.code : null) : 0;
        resolve({
          exitCode,
          signal: failure?.signal ?? null,
          stdout,
          stderr: failure && typeof failure.code === 'string' ? `${stderr}${failure.message}` : stderr,
          timedOut: Boolean(failure?.killed) && Date.now() - started >= options.timeoutMs,
          durationMs: Date.now() - started,
        });
      },
    );
  });
}
