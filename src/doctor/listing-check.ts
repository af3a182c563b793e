import { z } from 'zod';

import { check, type CheckResult } from './check-report.js';
import type { EndpointUnderCheck } from './doctor-plan.js';
import { errorText, getJson, shownUrl, type ServerTarget } from './server-wire.js';

/** The model listing: the server answers GET /v1/models and lists the model the roles ask for, with its context. */

const ListedModels = z.looseObject({
  data: z.array(z.looseObject({ id: z.string(), max_model_len: z.number().int().nullish() })),
});

export interface Listing {
  result: CheckResult;
  /** The model the probes ask for: the configured one, else (when allowed) one the server lists; null: none. */
  probeModel: string | null;
  servedContext: number | null;
}

/** `any-served`: a stage that serves its generation itself (rsi, eval) may find another model listed before it. */
export type ListingMode = 'required' | 'any-served';

export async function checkListing(
  target: ServerTarget,
  endpoint: EndpointUnderCheck,
  mode: ListingMode,
): Promise<Listing> {
  const name = 'served';
  const answer = await getJson(target, '/models');
  const fail = (seen: string, fix: string): Listing => ({
    result: check.fail(name, seen, fix),
    probeModel: null,
    servedContext: null,
  });
  if (!answer.ok) {
    return fail(
      `cannot reach the server: ${answer.error}`,
      `start the model server at ${shownUrl(endpoint.baseUrl)}, or correct the role's baseUrl`,
    );
  }
  if (answer.status === 401 || answer.status === 403) {
    return fail(
      `GET /v1/models answered ${answer.status}: the server wants a key it was not given`,
      "set the role's apiKeyEnv to the variable holding the server's key (vLLM's --api-key)",
    );
  }
  const listed = ListedModels.safeParse(answer.body);
  if (answer.status !== 200 || !listed.success) {
    return fail(
      `GET /v1/models answered ${answer.status}${listed.success ? '' : ', not a model list'}: ${errorText(answer)}`,
      "point the role's baseUrl at an OpenAI-compatible server's /v1",
    );
  }
  const models = listed.data.data;
  const found = models.find((model) => model.id === endpoint.model);
  if (found) {
    return {
      result: check.pass(name, `GET /v1/models lists ${endpoint.model}`),
      probeModel: endpoint.model,
      servedContext: found.max_model_len ?? null,
    };
  }
  const names = models.length > 0 ? models.map((model) => model.id).join(', ') : 'no model';
  const fix = `serve it under this name (vLLM's --served-model-name ${endpoint.model}), or name a listed model in the configuration`;
  if (mode === 'any-served' && models.length > 0) {
    return {
      result: check.warn(
        name,
        `GET /v1/models lists ${names}, not ${endpoint.model} (the run serves the generation it needs itself); probed ${models[0]!.id}`,
        null,
      ),
      probeModel: models[0]!.id,
      servedContext: models[0]!.max_model_len ?? null,
    };
  }
  return fail(`GET /v1/models lists ${names}, not ${endpoint.model}`, fix);
}
