import type { z } from 'zod';

import { recognisedProvider } from '../model/provider.js';
import { baseUrlProblem, type BaseUrlUse } from './base-url.js';
import type { Endpoint } from './endpoint.js';
import { roleSamplingProblems } from './role-sampling.js';

/** What the role checks read of a configuration. */
interface RoleChecked {
  roles: { executor: Endpoint; judge?: Endpoint; optimizer?: Endpoint };
  budgets: Record<'maxOutputTokensPerCall' | 'judgeMaxTokens' | 'optimizerMaxTokens', number>;
}

const ROLE_OUTPUT_BOUNDS = {
  executor: 'maxOutputTokensPerCall',
  judge: 'judgeMaxTokens',
  optimizer: 'optimizerMaxTokens',
} as const;

/** Each role's own sampling block, checked against what its provider accepts; the executor's provider too. */
export function checkRoleSampling(config: RoleChecked, context: z.RefinementCtx): void {
  const { executor } = config.roles;
  if (recognisedProvider(executor.provider, executor.baseUrl) !== 'openai-compatible') {
    context.addIssue({
      code: 'custom',
      path: ['roles', 'executor', 'provider'],
      message:
        'the team runs in qwen-code and is the model trained: serve it on vLLM or another OpenAI-compatible server (provider: openai-compatible, baseUrl); OpenAI and Anthropic models can judge or optimize',
    });
  }
  for (const role of ['executor', 'judge', 'optimizer'] as const) {
    const endpoint = config.roles[role];
    if (!endpoint?.sampling) continue;
    const provider = recognisedProvider(endpoint.provider, endpoint.baseUrl);
    const problems = roleSamplingProblems(
      provider,
      endpoint.sampling,
      config.budgets[ROLE_OUTPUT_BOUNDS[role]],
    );
    if (role === 'executor' && endpoint.sampling.reasoningEffort !== undefined) {
      problems.push(
        "the executor's harness (qwen-code) is given temperature, topP, topK and enableThinking only",
      );
    }
    for (const message of problems) {
      context.addIssue({ code: 'custom', path: ['roles', role, 'sampling'], message });
    }
  }
}

/**
 * Each role's base URL, checked for how its provider uses it (`baseUrlProblem`). Whether one must be given depends on
 * the model's kind (the toy model's server is started by mass): the host checks that (`src/hosting/model-kind.ts`).
 */
export function checkBaseUrls(config: RoleChecked, context: z.RefinementCtx): void {
  for (const role of ['executor', 'judge', 'optimizer'] as const) {
    const endpoint = config.roles[role];
    if (!endpoint) continue;
    const use = baseUrlUse(role, endpoint);
    if (use === null) continue;
    const path = ['roles', role, 'baseUrl'];
    if (endpoint.baseUrl === undefined) {
      if (endpoint.replicas !== undefined) {
        context.addIssue({
          code: 'custom',
          path: ['roles', role, 'replicas'],
          message: 'replicas are further addresses of the model at baseUrl: give baseUrl too',
        });
      }
      continue;
    }
    const problem = baseUrlProblem(endpoint.baseUrl, use);
    if (problem !== null) context.addIssue({ code: 'custom', path, message: problem });
    for (const [index, replica] of (endpoint.replicas ?? []).entries()) {
      const replicaProblem = replicaProblemOf(replica, endpoint.baseUrl, use);
      if (replicaProblem === null) continue;
      context.addIssue({ code: 'custom', path: ['roles', role, 'replicas', index], message: replicaProblem });
    }
  }
}

/** A replica is written like the base URL, on the same scheme, and only OpenAI-compatible servers have them. */
function replicaProblemOf(replica: string, baseUrl: string, use: BaseUrlUse): string | null {
  if (use !== 'team' && use !== 'openai-compatible') {
    return `replicas are for models you serve (provider openai-compatible), not ${use}'s API`;
  }
  const problem = baseUrlProblem(replica, use);
  if (problem !== null) return problem;
  if (new URL(replica).protocol !== new URL(baseUrl).protocol) {
    return `${JSON.stringify(replica)} uses another scheme than baseUrl ${JSON.stringify(baseUrl)}: serve every replica over the same one`;
  }
  return null;
}

/** How a role's base URL is used; null for an executor on a provider it cannot have (reported on its own). */
function baseUrlUse(role: 'executor' | 'judge' | 'optimizer', endpoint: Endpoint): BaseUrlUse | null {
  const provider = recognisedProvider(endpoint.provider, endpoint.baseUrl);
  if (role === 'executor') return provider === 'openai-compatible' ? 'team' : null;
  return provider;
}
