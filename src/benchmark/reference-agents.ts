import { cp, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';

import { errorMessage } from '../errors.js';
import { Sandbox, type SandboxMode } from '../episode/sandbox.js';
import type { ContainerImage } from '../episode/sandbox-container.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { materializeWorkspace } from '../tasks/materialize.js';

/** Where the oracle finds the task's solution inside its sandbox. */
const SOLUTION_INSIDE = '/solution';

export interface ReferenceRun {
  status: 'finished' | 'failed' | 'timeout';
  failure: string | null;
  wallSeconds: number;
}

/**
 * Harbor's two reference agents, which check a dataset rather than a model: `nop` leaves the starting workspace as it
 * is (every task should then score 0), `oracle` runs the task's solution/solve.sh in the agent's sandbox (every task
 * should score 1). The trial's folder gets the workspace; the solution is copied into the sandbox for the oracle
 * alone, never into the workspace.
 */
export async function runReferenceAgent(options: {
  agent: 'oracle' | 'nop';
  task: LoadedTask;
  trialDir: string;
  dataSeed: number;
  sandbox: SandboxMode;
  /** The task's own image, when it runs in a container instead of bubblewrap. */
  container?: ContainerImage;
}): Promise<ReferenceRun> {
  const { task, trialDir } = options;
  const harbor = task.harbor!;
  await rm(trialDir, { recursive: true, force: true });
  const workspaceDir = path.join(trialDir, 'workspace');
  await materializeWorkspace(task, { seed: options.dataSeed, workspaceDir });
  if (options.agent === 'nop') return { status: 'finished', failure: null, wallSeconds: 0 };
  if (!harbor.hasSolution) {
    return {
      status: 'failed',
      failure: `${harbor.dir} has no solution/solve.sh for the oracle`,
      wallSeconds: 0,
    };
  }
  const solution = path.join(trialDir, 'solution');
  await mkdir(solution, { recursive: true });
  await cp(path.join(harbor.dir, 'solution'), solution, { recursive: true });
  let sandbox: Sandbox;
  try {
    sandbox = await Sandbox.open({
      mode: options.sandbox,
      workspace: workspaceDir,
      stateDirectory: path.join(trialDir, 'sandbox'),
      placedDirectories: [{ host: solution, inside: SOLUTION_INSIDE, writable: false }],
      ...(options.container ? { container: options.container } : {}),
      warn: () => {},
    });
  } catch (error) {
    return {
      status: 'failed',
      failure: `the oracle's sandbox did not open: ${errorMessage(error)}`,
      wallSeconds: 0,
    };
  }
  try {
    const result = await sandbox.run({
      command: 'bash',
      args: [path.join(sandbox.placedPath(SOLUTION_INSIDE), 'solve.sh')],
      env: harbor.solutionEnv,
      limits: {
        wallClockSeconds: harbor.agentTimeoutSec,
        ...(harbor.memoryBytes === null ? {} : { memoryBytes: harbor.memoryBytes }),
      },
    });
    const wallSeconds = Math.round(result.wallSeconds * 100) / 100;
    if (result.timedOut) {
      return { status: 'timeout', failure: `solve.sh ran past ${harbor.agentTimeoutSec} s`, wallSeconds };
    }
    return result.exitCode === 0
      ? { status: 'finished', failure: null, wallSeconds }
      : { status: 'failed', failure: `solve.sh exited with ${result.exitCode}`, wallSeconds };
  } finally {
    await sandbox.close();
  }
}
