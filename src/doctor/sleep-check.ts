import { check, type CheckResult } from './check-report.js';
import { errorText, getFromRoot, type ServerTarget } from './server-wire.js';

const SLEEP_FLAGS = 'start vLLM with --enable-sleep-mode and the environment variable VLLM_SERVER_DEV_MODE=1';

/**
 * vLLM's sleep-mode routes, which `rsi.sleepDuringTraining` puts the executor's server to sleep and wakes it with:
 * `GET /is_sleeping` answers `{"is_sleeping": false}` on a server that has them and is awake; nothing is put to sleep
 * here.
 */
export async function checkSleepRoutes(target: ServerTarget): Promise<CheckResult> {
  const name = 'sleep mode';
  const answer = await getFromRoot(target, '/is_sleeping');
  if (!answer.ok) return check.fail(name, `GET /is_sleeping failed: ${answer.error}`, SLEEP_FLAGS);
  const state = (answer.body as { is_sleeping?: unknown } | undefined)?.is_sleeping;
  if (answer.status !== 200 || typeof state !== 'boolean') {
    return check.fail(
      name,
      `GET /is_sleeping answered ${answer.status} (${errorText(answer) || 'no sleep state'}): rsi.sleepDuringTraining would stop the run before its first training`,
      SLEEP_FLAGS,
    );
  }
  return state
    ? check.warn(
        name,
        'the routes answer, and the server is asleep now',
        'POST /wake_up, or let mass rsi wake it',
      )
    : check.pass(name, 'the routes answer (/sleep, /wake_up, /is_sleeping), and the server is awake');
}
