import { HARNESS_PROMPT_TOKENS } from '../harness/context-window.js';
import type { RunConfig } from '../config/run-config.js';
import { check, type CheckResult } from './check-report.js';
import type { EndpointUnderCheck } from './doctor-plan.js';

/** The context the roles on this endpoint need at the least, against what the server lists. */
export function checkContext(
  config: RunConfig,
  endpoint: EndpointUnderCheck,
  served: number | null,
): CheckResult {
  const { budgets } = config;
  const needs: Array<[number, string]> = [];
  if (endpoint.team) {
    needs.push([
      HARNESS_PROMPT_TOKENS + budgets.maxOutputTokensPerCall,
      `the harness's prompt ${HARNESS_PROMPT_TOKENS} + budgets.maxOutputTokensPerCall ${budgets.maxOutputTokensPerCall}`,
    ]);
  }
  if (endpoint.roles.some((role) => role === 'judge' || role.startsWith('evaluation judge'))) {
    needs.push([
      2 * budgets.judgeBundleTokens + budgets.judgeMaxTokens,
      `two bundles of budgets.judgeBundleTokens ${budgets.judgeBundleTokens} + budgets.judgeMaxTokens ${budgets.judgeMaxTokens}, before the judge's prompt`,
    ]);
  }
  if (endpoint.roles.includes('optimizer')) {
    needs.push([
      budgets.optimizerEvidenceTokens + budgets.optimizerMaxTokens,
      `budgets.optimizerEvidenceTokens ${budgets.optimizerEvidenceTokens} + budgets.optimizerMaxTokens ${budgets.optimizerMaxTokens}, before the optimizer's prompt`,
    ]);
  }
  const [need, because] = needs.reduce((most, next) => (next[0] > most[0] ? next : most), [0, ''] as [
    number,
    string,
  ]);
  const configured = budgets.contextWindowSize;
  if (served === null) {
    return check.pass(
      'context',
      `the server lists no max_model_len: budgets.contextWindowSize ${configured} is taken as the model's context`,
    );
  }
  if (served < need) {
    return check.fail(
      'context',
      `max_model_len ${served}, but ${because} need ${need}`,
      `start vLLM with --max-model-len ${need} or more, or lower those budgets`,
    );
  }
  return check.pass(
    'context',
    `max_model_len ${served}${served < configured ? ` (below budgets.contextWindowSize ${configured}: the run uses ${served})` : ''}; the roles here need at least ${need}`,
  );
}
