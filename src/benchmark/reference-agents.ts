import { errorMessage } from '../errors.js';
import type { TrialEnvironment } from '../episode/trial-environment.js';
import type { HarborTask } from '../tasks/harbor-task.js';

/** Where the oracle finds the task's solution inside the trial's environment. */
const SOLUTION_INSIDE = '/solution';
/** The most of solve.sh's output kept in the trial's record. */
const OUTPUT_TAIL_BYTES = 8 * 1024;

export interface ReferenceRun {
  status: 'finished' | 'failed' | 'timeout';
  failure: string | null;
  wallSeconds: number;
  /** The last of what solve.sh printed (standard output and error, interleaved); empty for nop. */
  output: string;
}

/**
 * Harbor's two reference agents, which check a dataset rather than a model: `nop` leaves the environment as it
 * starts (every task should then score 0), `oracle` puts the task's `solution/` in at `/solution` and runs
 * `solve.sh` in the trial's environment as the agent would run (the agent's user, its working folder, its network;
 * every task should score 1). What solve.sh printed is kept.
 */
export async function runReferenceAgent(options: {
  agent: 'oracle' | 'nop';
  task: HarborTask;
  environment: TrialEnvironment;
}): Promise<ReferenceRun> {
  const { task, environment } = options;
  if (options.agent === 'nop') return { status: 'finished', failure: null, wallSeconds: 0, output: '' };
  if (!task.hasSolution) {
    return {
      status: 'failed',
      failure: `${task.dir} has no solution/solve.sh for the oracle`,
      wallSeconds: 0,
      output: '',
    };
  }
  let kept = Buffer.alloc(0);
  const keep = (chunk: Buffer) => {
    const joined = Buffer.concat([kept, chunk]);
    kept = joined.length > OUTPUT_TAIL_BYTES ? joined.subarray(joined.length - OUTPUT_TAIL_BYTES) : joined;
  };
  let result;
  try {
    await environment.putFiles(`${task.dir}/solution`, SOLUTION_INSIDE, task.agentUser);
    result = await environment.exec({
      command: ['bash', `${SOLUTION_INSIDE}/solve.sh`],
      user: task.agentUser,
      env: { ...task.environmentEnv, ...task.solutionEnv },
      stdout: { onData: keep },
      stderr: { onData: keep },
      limits: {
        wallClockSeconds: task.agentTimeoutSec,
        ...(task.memoryBytes === null ? {} : { memoryBytes: task.memoryBytes }),
      },
    });
  } catch (error) {
    return {
      status: 'failed',
      failure: `solve.sh could not be run: ${errorMessage(error)}`,
      wallSeconds: 0,
      output: kept.toString('utf8'),
    };
  }
  const wallSeconds = Math.round(result.wallSeconds * 100) / 100;
  const output = kept.toString('utf8');
  if (result.timedOut) {
    return { status: 'timeout', failure: `solve.sh ran past ${task.agentTimeoutSec} s`, wallSeconds, output };
  }
  return result.exitCode === 0
    ? { status: 'finished', failure: null, wallSeconds, output }
    : {
        status: 'failed',
        failure: `solve.sh exited with ${result.exitCode}${lastLines(output)}`,
        wallSeconds,
        output,
      };
}

/** The last lines solve.sh printed, for the failure's reader (the whole tail is in agent-output.txt). */
function lastLines(output: string): string {
  const lines = output.trimEnd().split('\n').slice(-5).join('\n');
  return lines === '' ? ', printing nothing' : `; its last lines:\n${lines.slice(-600)}`;
}
