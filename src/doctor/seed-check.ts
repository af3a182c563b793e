import { check, type CheckResult } from './check-report.js';
import type { EndpointUnderCheck } from './doctor-plan.js';
import { excerpt, probeBody, WireCompletion } from './probe-exchange.js';
import { errorText, postJson, type ServerTarget } from './server-wire.js';

/** Two identical requests with the run's seed: the same answer, or a run that cannot be replayed. */
export async function checkSeed(
  target: ServerTarget,
  model: string,
  endpoint: EndpointUnderCheck,
  seed: number,
): Promise<CheckResult> {
  const name = 'seed';
  const body = {
    ...probeBody('sample', model, endpoint.sampling, { maxTokens: 48, enableThinking: false }),
    seed,
  };
  if (endpoint.sampling.temperature === 0) {
    return check.pass(name, 'temperature 0: greedy sampling, the seed plays no part');
  }
  const answers: string[] = [];
  for (let attempt = 0; attempt < 2; attempt++) {
    const answer = await postJson(target, '/chat/completions', body);
    if (!answer.ok) return check.warn(name, `the seed probe failed: ${answer.error}`, null);
    const parsed = WireCompletion.safeParse(answer.body);
    if (answer.status !== 200 || !parsed.success) {
      return check.warn(name, `a request with a seed answered ${answer.status}: ${errorText(answer)}`, null);
    }
    const message = parsed.data.choices[0]!.message;
    answers.push(`${message.reasoning_content ?? message.reasoning ?? ''}\n${message.content ?? ''}`);
  }
  if (answers[0] === answers[1]) {
    return check.pass(
      name,
      `two requests with seed ${seed} at temperature ${endpoint.sampling.temperature ?? 'default'} gave the same answer`,
    );
  }
  return check.warn(
    name,
    `two requests with seed ${seed} gave different answers (${excerpt(answers[0]!, 40)} and ${excerpt(answers[1]!, 40)}): episodes cannot be replayed exactly`,
    'vLLM samples a request with its seed: remove any proxy that drops the field, and start vLLM with --seed <n>; batch-dependent kernels can still differ (a run stays valid, only not reproducible)',
  );
}
