import { z } from 'zod';

import { Prices } from './prices.js';
import { RoleSampling } from './role-sampling.js';

/**
 * One role's model: where it is served, under which name, with which key and sampling. Without a `baseUrl`, the
 * run's model host places it (the toy model: served by mass itself).
 */
export const Endpoint = z
  .object({
    provider: z
      .enum(['openai-compatible', 'openai', 'anthropic'])
      .default('openai-compatible')
      .describe(
        "openai-compatible: vLLM and the like; openai: OpenAI's API (also any baseUrl on api.openai.com); anthropic: Anthropic's API",
      ),
    baseUrl: z
      .string()
      .url()
      .describe(
        "the executor's and OpenAI's: OpenAI style, ending in /v1; a judge's or optimizer's other OpenAI-compatible server: its own version path; anthropic: the server's root (optional for openai and anthropic: their own API; absent with model.kind toy, whose server mass starts)",
      )
      .optional(),
    replicas: z
      .array(z.string().url())
      .optional()
      .describe(
        'more addresses serving the same model under the same name, each written like baseUrl: calls go to the least loaded healthy one of baseUrl and these, a replica in outage is skipped while another answers, and deployments, the deployment check and mass doctor reach each (openai-compatible only)',
      ),
    model: z.string().min(1),
    apiKeyEnv: z
      .string()
      .min(1)
      .optional()
      .describe('the environment variable holding the key; never the key'),
    maxConcurrency: z.number().int().positive().default(64),
    images: z
      .boolean()
      .optional()
      .describe(
        "the model takes image input: the harness is told so and its read_file returns images (plots) to it; default false (the executor's; text only)",
      ),
    prices: Prices.optional().describe(
      "what this endpoint's tokens cost, per million: { input, cachedInput, output } in US dollars; a cost the provider reports (OpenRouter's usage.cost) wins",
    ),
    sampling: RoleSampling.optional().describe(
      "this role's own sampling; on openai-compatible servers unset fields come from the run's sampling, on openai and anthropic only what is set here is sent",
    ),
  })
  .strict();
export type Endpoint = z.infer<typeof Endpoint>;

/**
 * An endpoint on an OpenAI-compatible server that gives no address: the run's model host serves it (the toy model).
 * OpenAI's and Anthropic's endpoints without one use those providers' own APIs.
 */
export function isUnaddressed(endpoint: Pick<Endpoint, 'provider' | 'baseUrl'>): boolean {
  return endpoint.baseUrl === undefined && endpoint.provider === 'openai-compatible';
}

/** Every address the endpoint is served at: its `baseUrl`, then its `replicas` (none without a `baseUrl`). */
export function endpointAddresses(endpoint: Pick<Endpoint, 'baseUrl' | 'replicas'>): string[] {
  if (endpoint.baseUrl === undefined) return [];
  const strip = (url: string) => url.replace(/\/+$/, '');
  return [...new Set([endpoint.baseUrl, ...(endpoint.replicas ?? [])].map(strip))];
}

export const ROLES = ['executor', 'judge', 'optimizer'] as const;
export type Role = (typeof ROLES)[number];
export type RoleEndpoints = Record<Role, Endpoint>;

/** The endpoint of each role, the executor's standing in for a role that names none. */
export function roleEndpoints(config: {
  roles: { executor: Endpoint; judge?: Endpoint; optimizer?: Endpoint };
}): RoleEndpoints {
  const { executor, judge, optimizer } = config.roles;
  return { executor, judge: judge ?? executor, optimizer: optimizer ?? executor };
}

/**
 * The endpoints while a generation served as `servedAs` plays: the executor under that name, and the judge and the
 * optimizer too unless the configuration gives them a model of their own (the paper's ablations keep that role fixed
 * across generations). `place` puts an endpoint where it is served (the toy model: the server mass started).
 */
export function generationEndpoints(
  config: { roles: { executor: Endpoint; judge?: Endpoint; optimizer?: Endpoint } },
  servedAs: string,
  place: (endpoint: Endpoint) => Endpoint = (endpoint) => endpoint,
): RoleEndpoints {
  const configured = roleEndpoints(config);
  const executor = place({ ...configured.executor, model: servedAs });
  return {
    executor,
    judge: config.roles.judge ? place(configured.judge) : executor,
    optimizer: config.roles.optimizer ? place(configured.optimizer) : executor,
  };
}
