import { z } from 'zod';

import { chatCompletionParameters } from '../model/request-parameters.js';
import { check, type CheckResult } from './check-report.js';
import type { DoctorPlan, EndpointUnderCheck } from './doctor-plan.js';
import { probeMessages } from './probe-protocol.js';
import { postJson, type ServerTarget } from './server-wire.js';
import type { ThroughputMeasurement } from './throughput-record.js';

/** Output tokens each throughput request asks for: enough to measure decoding, few enough to take seconds. */
export const THROUGHPUT_MAX_TOKENS = 64;
/** The whole probe's bound: requests still running then are cut off and counted as not finished. */
const THROUGHPUT_SECONDS = 20;

const Usage = z.looseObject({ usage: z.looseObject({ completion_tokens: z.number() }) });

interface Measured {
  tokens: number;
  seconds: number;
  finished: number;
}

async function measure(target: ServerTarget, model: string, concurrency: number): Promise<Measured> {
  const body = {
    model,
    messages: probeMessages('throughput'),
    ...chatCompletionParameters('openai-compatible', {
      maxTokens: THROUGHPUT_MAX_TOKENS,
      temperature: 0,
      enableThinking: false,
    }),
  };
  const bounded = { ...target, timeoutMs: Math.min(target.timeoutMs, THROUGHPUT_SECONDS * 1000) };
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: concurrency }, () => postJson(bounded, '/chat/completions', body)),
  );
  const seconds = (performance.now() - started) / 1000;
  let tokens = 0;
  let finished = 0;
  for (const answer of answers) {
    if (!answer.ok || answer.status !== 200) continue;
    const usage = Usage.safeParse(answer.body);
    if (!usage.success) continue;
    tokens += usage.data.usage.completion_tokens;
    finished++;
  }
  return { tokens, seconds, finished };
}

/**
 * Output tokens per second with one call and with the run's calls at once (the executor endpoint's
 * `maxConcurrency`), and what the latter means in episodes an hour at the plan's tokens per episode; with the
 * figures themselves, for the throughput record `mass plan` reads (none when even one call did not finish).
 */
export async function checkThroughput(
  target: ServerTarget,
  model: string,
  endpoint: EndpointUnderCheck,
  plan: DoctorPlan,
): Promise<{ result: CheckResult; measured: ThroughputMeasurement | null }> {
  const name = 'throughput';
  const single = await measure(target, model, 1);
  if (single.finished === 0) {
    return {
      result: check.warn(
        name,
        `a ${THROUGHPUT_MAX_TOKENS}-token request did not finish in ${THROUGHPUT_SECONDS} s`,
        null,
      ),
      measured: null,
    };
  }
  const concurrency = endpoint.maxConcurrency;
  const many = concurrency > 1 ? await measure(target, model, concurrency) : single;
  const seconds = (measured: Measured) => Math.max(measured.seconds, 1e-3);
  const rate = (measured: Measured) => measured.tokens / seconds(measured);
  const perHour = (rate(many) * 3600) / plan.episodeOutputTokens;
  const seen =
    `${rate(single).toFixed(0)} output tokens/s with 1 call, ${rate(many).toFixed(0)} with ${concurrency} at once` +
    `${many.finished < concurrency ? ` (${many.finished} of ${concurrency} finished)` : ''}` +
    `: about ${perHour < 10 ? perHour.toFixed(1) : perHour.toFixed(0)} episodes an hour at ${plan.episodeOutputTokensSource}`;
  return {
    result: check.pass(name, seen),
    measured: {
      concurrency,
      finishedCalls: many.finished,
      seconds: round(many.seconds),
      callsPerSecond: round(many.finished / seconds(many)),
      outputTokensPerSecond: round(rate(many)),
      singleCallOutputTokensPerSecond: round(rate(single)),
    },
  };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
