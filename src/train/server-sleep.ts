import { z } from 'zod';

import { errorMessage, UserError } from '../errors.js';
import {
  parseJson,
  replyError,
  requestServer,
  serverRoot,
  type InferenceServer,
} from './inference-server.js';

/**
 * vLLM's sleep mode, which lets one machine serve and train without a restart: before training, `POST /sleep?level=1`
 * moves the served weights to CPU memory and frees the GPU memory of the weights and the KV cache; after it, `POST
 * /wake_up` brings them back. vLLM offers these routes (and `GET /is_sleeping`) only when started with
 * `--enable-sleep-mode` and the environment variable `VLLM_SERVER_DEV_MODE=1`.
 */
export const SLEEP_SETUP =
  'start vLLM with --enable-sleep-mode and the environment variable VLLM_SERVER_DEV_MODE=1, or turn ' +
  'rsi.serving.sleepDuringTraining off';

const SleepState = z.looseObject({ is_sleeping: z.boolean() });

/** Whether the server has the sleep routes, and if so whether it sleeps now. */
export type SleepRoutes = { available: false; reason: string } | { available: true; sleeping: boolean };

/** `GET /is_sleeping`: absent (404) on a server without sleep mode. */
export async function sleepRoutes(server: InferenceServer, signal?: AbortSignal): Promise<SleepRoutes> {
  const reply = await requestServer(server, 'GET', '/is_sleeping', { signal });
  if (reply.status === 404) {
    return { available: false, reason: `GET ${reply.url} answered 404: ${SLEEP_SETUP}` };
  }
  if (reply.status !== 200) throw replyError(reply, 'GET');
  const state = SleepState.safeParse(parseJson(reply.text));
  if (!state.success) {
    return {
      available: false,
      reason: `GET ${reply.url} did not say whether it sleeps: ${reply.text.slice(0, 200)}`,
    };
  }
  return { available: true, sleeping: state.data.is_sleeping };
}

/** Puts the server to sleep (level 1: weights kept in CPU memory) and checks that it says it sleeps. */
export async function putServerToSleep(server: InferenceServer, signal?: AbortSignal): Promise<void> {
  await switchSleep(server, 'POST', '/sleep?level=1', true, signal);
}

/** Wakes the server and checks that it says it is awake. */
export async function wakeServer(server: InferenceServer, signal?: AbortSignal): Promise<void> {
  await switchSleep(server, 'POST', '/wake_up', false, signal);
}

/**
 * Runs `work` (the training) with the server asleep, and wakes it afterwards whether the work succeeded or not, so
 * that a failed training leaves a server that answers. Refuses before sleeping when the server has no sleep routes.
 */
export async function whileServerSleeps<T>(
  server: InferenceServer,
  work: () => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  const routes = await sleepRoutes(server, signal);
  if (!routes.available) throw new UserError(routes.reason);
  if (!routes.sleeping) await putServerToSleep(server, signal);
  let result: T;
  try {
    result = await work();
  } catch (error) {
    await wakeServer(server).catch((wakeError: unknown) => {
      throw new AggregateError(
        [error, wakeError],
        `${errorMessage(error)}; and waking the server failed too: ${errorMessage(wakeError)}`,
      );
    });
    throw error;
  }
  await wakeServer(server);
  return result;
}

async function switchSleep(
  server: InferenceServer,
  method: 'POST',
  endpoint: string,
  sleeping: boolean,
  signal?: AbortSignal,
): Promise<void> {
  const reply = await requestServer(server, method, endpoint, { signal });
  if (reply.status === 404) throw new UserError(`${method} ${reply.url} answered 404: ${SLEEP_SETUP}`);
  if (reply.status < 200 || reply.status >= 300) throw replyError(reply, method);
  const routes = await sleepRoutes(server, signal);
  if (!routes.available || routes.sleeping !== sleeping) {
    throw new UserError(
      `${serverRoot(server.baseUrl)} answered ${method} ${endpoint} but does not say it ${sleeping ? 'sleeps' : 'is awake'} ` +
        `(GET /is_sleeping: ${routes.available ? routes.sleeping : routes.reason})`,
    );
  }
}
