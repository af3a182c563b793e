import { constants } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';

import { errorMessage } from '../errors.js';
import { SANDBOX_OPENINGS, type SandboxResult } from '../episode/sandbox-run.js';
import type { TrialEnvironment } from '../episode/trial-environment.js';
import type { HarborTask } from '../tasks/harbor-task.js';
import type { VerificationStatus, Verification } from '../records/benchmark-verification.js';

/** Where Harbor's verifier finds its tests and writes its reward, inside the sandbox. */
export const TESTS_INSIDE = '/tests';
export const VERIFIER_LOGS_INSIDE = '/logs/verifier';
/** The most of a reward file, of stdout and of stderr that is read back. */
const MAX_REWARD_BYTES = 64 * 1024;
const OUTPUT_TAIL_BYTES = 8 * 1024;

export interface VerifyOptions {
  task: HarborTask;
  /** The trial's environment, as the agent left it: the verifier runs in it. */
  environment: TrialEnvironment;
  /**
   * The folder for what the verifier hands back (`logs/`: its reward files and whatever else it wrote); its `logs/`
   * is made anew. The caller empties the rest (the verifier's `egress.jsonl` is written there while it runs).
   */
  verifierDir: string;
}

/**
 * Harbor's verification of a finished trial, in the trial's own environment as the agent left it: the task's
 * `tests/` put in only now at `/tests`, an empty `/logs/verifier`, then `bash /tests/test.sh` from the environment's
 * working folder (as Harbor runs it: the image's WORKDIR in a container, `/workspace` in bubblewrap) as the task's
 * verifier user, under its verifier timeout, with `[environment.env]` and the verifier's environment, and
 * `PYTHONSAFEPATH` so that a Python runner never imports the agent's modules from its working folder. Its network is
 * the agent's (the caller's egress proxy, or none). `/logs/verifier` is then handed back (no link, no set-user-ID
 * bit) and the reward read from `reward.txt` (one float) or `reward.json` (an object of numbers), as Harbor reads
 * them. Whatever test.sh printed or wrote, the result is a record: nothing of it is thrown.
 */
export async function verifyTrial(options: VerifyOptions): Promise<Verification> {
  const { task, verifierDir, environment } = options;
  const logs = path.join(verifierDir, 'logs');
  const empty = path.join(verifierDir, 'empty');
  await Promise.all([logs, empty].map((folder) => rm(folder, { recursive: true, force: true })));
  await mkdir(empty, { recursive: true });
  const stdout = new OutputTail();
  const stderr = new OutputTail();
  const common = { leftOut: [], stdoutTail: '', stderrTail: '' };
  let result;
  try {
    await environment.putFiles(path.join(task.dir, 'tests'), TESTS_INSIDE, task.verifierUser);
    await environment.putFiles(empty, VERIFIER_LOGS_INSIDE, task.verifierUser);
    result = await environment.exec({
      ...verifierInvocation(task, environment.workdir),
      stdout: { onData: (chunk) => stdout.add(chunk) },
      stderr: { onData: (chunk) => stderr.add(chunk) },
      limits: {
        wallClockSeconds: task.verifierTimeoutSec,
        ...(task.memoryBytes === null ? {} : { memoryBytes: task.memoryBytes }),
      },
    });
  } catch (error) {
    return failed('crashed', `test.sh could not be run: ${errorMessage(error)}`, common);
  }
  let handedBack;
  try {
    handedBack = await environment.getFiles(VERIFIER_LOGS_INSIDE, logs);
  } catch (error) {
    return failed(
      'crashed',
      `${VERIFIER_LOGS_INSIDE} could not be read back: ${errorMessage(error)}`,
      common,
    );
  }
  const leftOut = [
    ...(handedBack?.leftOut ?? []),
    ...(handedBack?.links ?? []).map((link) => ({
      path: link.path,
      reason: `a symbolic link (to ${link.target}), never followed`,
    })),
  ];
  const outputs = {
    leftOut,
    stdoutTail: stdout.text(),
    stderrTail: stderr.text(),
  };
  return verificationOutcome({ run: result, reward: await readReward(logs), outputs, task });
}

/**
 * How test.sh is run (pure, for every back-end): `bash /tests/test.sh` from `workdir`, the environment's working folder
 * where the agent's commands start too (Harbor gives its verifier no other), as the task's verifier user, with
 * `[environment.env]`, then the verifier's own variables, then mass's. `PYTHONSAFEPATH` keeps the working folder
 * and a script's folder off Python's module search path, so that a `python3 -m pytest` run from the agent's workspace
 * never imports the agent's own `pytest.py` (or any module named like one the runner imports);
 * `PYTHONDONTWRITEBYTECODE` keeps the verifier from leaving compiled files in that workspace.
 */
export function verifierInvocation(
  task: Pick<HarborTask, 'environmentEnv' | 'verifierEnv' | 'verifierUser'>,
  workdir: string,
): { command: string[]; user: string | null; cwd: string; env: Record<string, string> } {
  return {
    command: ['bash', `${TESTS_INSIDE}/test.sh`],
    user: task.verifierUser,
    cwd: workdir,
    env: {
      ...task.environmentEnv,
      ...task.verifierEnv,
      PYTHONSAFEPATH: '1',
      PYTHONDONTWRITEBYTECODE: '1',
      TESTS_DIR: TESTS_INSIDE,
      LOGS_DIR: VERIFIER_LOGS_INSIDE,
      WORKSPACE: workdir,
    },
  };
}

/** Inside a sandbox or container a command killed by a signal exits with 128 + the signal's number. */
const SIGNAL_EXITS = { first: 129, last: 128 + 64 };

/**
 * How a verification ended, from what can be told without trusting test.sh (pure). A reward counts only when test.sh
 * ended by itself, neither at a limit nor by a signal: code the verifier runs (the agent's, when a verifier imports
 * it) could write a reward file and then kill the verifier before it writes its own, so a reward left by a killed
 * verifier is never read as one. test.sh failing without a reward is its set-up failing (`setup-failed`), never a 0.
 */
export function verificationOutcome(ended: {
  run: Pick<SandboxResult, 'exitCode' | 'timedOut' | 'limitExceeded' | 'signal' | 'wallSeconds' | 'started'>;
  reward: RewardRead;
  outputs: Pick<Verification, 'leftOut' | 'stdoutTail' | 'stderrTail'>;
  task: Pick<HarborTask, 'verifierTimeoutSec'>;
}): Verification {
  const { run, reward, outputs } = ended;
  const ran = { exitCode: run.exitCode, wallSeconds: round(run.wallSeconds) };
  const fail = (status: Exclude<VerificationStatus, 'scored'>, detail: string): Verification => ({
    ...failed(status, detail, outputs),
    ...ran,
  });
  if (run.started === false) {
    const said = firstLine(outputs.stderrTail);
    return fail(
      'crashed',
      `test.sh never started: the sandbox's own set-up failed, each of the ${SANDBOX_OPENINGS} times it was opened${said === '' ? '' : ` ("${said}")`}`,
    );
  }
  if (run.timedOut)
    return fail('timeout', `test.sh ran past the verifier's ${ended.task.verifierTimeoutSec} s`);
  const untrusted = reward.kind === 'none' ? '' : '; the reward file it left is not trusted';
  if (run.limitExceeded !== null) {
    return fail('crashed', `test.sh was stopped at the ${run.limitExceeded} limit${untrusted}`);
  }
  const exit = run.exitCode;
  if (run.signal !== null || exit === null || (exit >= SIGNAL_EXITS.first && exit <= SIGNAL_EXITS.last)) {
    const how = exit === null ? `by ${run.signal ?? 'a signal'}` : `by signal ${exit - 128} (exit ${exit})`;
    const distrust =
      untrusted === '' ? '' : `${untrusted}: code it ran may have written it before ending the verifier`;
    return fail('crashed', `test.sh was killed ${how}${distrust}`);
  }
  if (reward.kind === 'bad') return fail('bad-reward', reward.detail);
  if (reward.kind === 'none') {
    return exit === 0
      ? fail(
          'no-reward',
          `test.sh wrote neither ${VERIFIER_LOGS_INSIDE}/reward.txt nor reward.json (it exited with 0)`,
        )
      : fail(
          'setup-failed',
          `test.sh exited with ${exit} without writing a reward: it failed before its tests judged the work (its set-up, such as installing its test runner, or the verifier itself)` +
            setupHint(outputs),
        );
  }
  const notes = [
    exit === 0 ? null : `test.sh exited with ${exit} after writing its reward`,
    reward.reward === 0 ? setupHint(outputs).replace(/^; /, '') || null : null,
  ].filter((note): note is string => note !== null);
  return {
    status: 'scored',
    reward: reward.reward,
    rewards: reward.rewards,
    rewardFile: reward.file,
    detail: notes.length === 0 ? null : notes.join('; '),
    ...ran,
    ...outputs,
  };
}

/**
 * A zero that may be a broken verifier rather than a wrong answer: its output says a command or a module was missing
 * (a test runner that was never installed, typically for want of the network). Only a hint beside the reward.
 */
function setupHint(outputs: Pick<Verification, 'stdoutTail' | 'stderrTail'>): string {
  const line = `${outputs.stdoutTail}\n${outputs.stderrTail}`
    .split('\n')
    .find((text) => /command not found|No module named|not installed|Could not resolve host/i.test(text));
  return line === undefined
    ? ''
    : `; its output says "${line.trim().slice(0, 200)}": its set-up may have failed`;
}

/** The first line of `text` that says something, at most 200 characters. */
function firstLine(text: string): string {
  return (text.split('\n').find((line) => line.trim() !== '') ?? '').trim().slice(0, 200);
}

/** The verification of a trial whose environment never started: crashed, with the reason. */
export function unstartedVerification(detail: string): Verification {
  return failed('crashed', detail, { leftOut: [], stdoutTail: '', stderrTail: '' });
}

function failed(
  status: Exclude<VerificationStatus, 'scored'>,
  detail: string,
  outputs: Pick<Verification, 'leftOut' | 'stdoutTail' | 'stderrTail'>,
): Verification {
  return {
    status,
    reward: null,
    rewards: null,
    rewardFile: null,
    detail,
    exitCode: null,
    wallSeconds: 0,
    ...outputs,
  };
}

export type RewardRead =
  | {
      kind: 'scored';
      reward: number;
      rewards: Record<string, number> | null;
      file: 'reward.txt' | 'reward.json';
    }
  | { kind: 'bad'; detail: string }
  | { kind: 'none' };

/**
 * reward.txt first (one float), then reward.json (an object of finite numbers: its `reward`, or its only number).
 * The files were written by code that read the agent's workspace: they are read bounded, never trusted to parse.
 */
export async function readReward(logs: string): Promise<RewardRead> {
  const text = await readBounded(path.join(logs, 'reward.txt'));
  if (text !== null) {
    const trimmed = text.trim();
    const value = Number(trimmed);
    if (trimmed === '' || !Number.isFinite(value)) {
      return {
        kind: 'bad',
        detail: `reward.txt holds ${JSON.stringify(trimmed.slice(0, 80))}, not one number`,
      };
    }
    return { kind: 'scored', reward: value, rewards: null, file: 'reward.txt' };
  }
  const json = await readBounded(path.join(logs, 'reward.json'));
  if (json === null) return { kind: 'none' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return { kind: 'bad', detail: 'reward.json is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { kind: 'bad', detail: 'reward.json is not a JSON object' };
  }
  const rewards = Object.fromEntries(
    Object.entries(parsed).filter(
      (entry): entry is [string, number] => typeof entry[1] === 'number' && Number.isFinite(entry[1]),
    ),
  );
  const names = Object.keys(rewards);
  const reward =
    'reward' in rewards ? rewards['reward'] : names.length === 1 ? rewards[names[0]!] : undefined;
  if (reward === undefined) {
    return {
      kind: 'bad',
      detail:
        names.length === 0
          ? 'reward.json holds no number'
          : `reward.json holds ${names.length} numbers (${names.slice(0, 5).join(', ')}) and none is named "reward"`,
    };
  }
  return { kind: 'scored', reward, rewards, file: 'reward.json' };
}

/**
 * A regular file's text, at most MAX_REWARD_BYTES of it; null when there is none, or when it is a link (which the
 * host would follow to a file of its own) or anything but a regular file.
 */
async function readBounded(file: string): Promise<string | null> {
  let handle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    if (!(await handle.stat()).isFile()) return null;
    const buffer = Buffer.alloc(MAX_REWARD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, MAX_REWARD_BYTES, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** The last OUTPUT_TAIL_BYTES of a stream, however much it printed. */
class OutputTail {
  private kept = Buffer.alloc(0);

  add(chunk: Buffer): void {
    const joined = Buffer.concat([this.kept, chunk]);
    this.kept =
      joined.length > OUTPUT_TAIL_BYTES ? joined.subarray(joined.length - OUTPUT_TAIL_BYTES) : joined;
  }

  text(): string {
    return this.kept.toString('utf8');
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
