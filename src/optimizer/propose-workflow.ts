import { sumCallCosts } from '../cost/call-cost.js';
import { UserError } from '../errors.js';
import { trackModelCall } from '../judge/open-model-calls.js';
import type { ChatMessage, ChatModel, SamplingParams, TokenUsage } from '../model/types.js';
import { renderWorkflowDiff } from '../workflow/workflow-diff.js';
import { designForm, type TeamDesign } from '../workflow/workflow.js';
import type { OptimizerAttempt, OptimizerOutcome } from '../records/optimizer-outcome.js';
import {
  buildOptimizerPrompt,
  CHANGE_MEASURE,
  type OptimizerInput,
  type OptimizerPromptOptions,
} from './optimizer-prompt.js';
import { parseOptimizerReply } from './optimizer-reply.js';
import { shownToOptimizer } from './shown-to-optimizer.js';

export interface ProposeWorkflowOptions extends OptimizerPromptOptions {
  /** The model name sent in every request. */
  modelName: string;
  /** Default: `OPTIMIZER_SAMPLING`, the paper's settings for optimizer calls. */
  sampling?: SamplingParams;
  /** Corrected replies asked for after an unusable one (default 2). */
  repairAttempts?: number;
  signal?: AbortSignal;
}

/** The official settings for optimizer and judge calls: Qwen3's sampling, thinking on, a 49,152-token output budget. */
export const OPTIMIZER_SAMPLING: SamplingParams = {
  temperature: 0.6,
  topP: 0.95,
  topK: 20,
  maxTokens: 49_152,
  enableThinking: true,
};

const DEFAULT_REPAIR_ATTEMPTS = 2;
/** Rounding slack so that a proposal at exactly the bound is not refused for a floating-point hair. */
const BOUND_TOLERANCE = 1e-9;

/**
 * Asks the model for an improved workflow and returns a validated proposal or a recorded failure; it never returns
 * an unvalidated or unchanged design.
 *
 * An unusable reply (no JSON, missing members, an invalid or unchanged design) is sent back with its errors, up to
 * `repairAttempts` times. With `maxChangeFraction`, a valid proposal that changes more than the bound is sent back
 * once with the bound stated (that costs no repair attempt); if the answer still exceeds it, the proposal is
 * refused (`change-bound-exceeded`, the proposal kept in the outcome), never clipped: cutting a design down
 * mechanically would leave hops and contracts that no longer fit together, and the search can simply keep its
 * current design. Model-call failures (a server that keeps failing) are thrown, not recorded: they are not the
 * model's answer. The bound applies to a structured current design only: from free text or a draft v0 the reply must
 * restate the whole design in the structured form, which no share of change could bound (`changeBound`).
 */
export async function proposeWorkflow(
  model: ChatModel,
  input: OptimizerInput,
  options: ProposeWorkflowOptions,
): Promise<OptimizerOutcome> {
  const repairAttempts = options.repairAttempts ?? DEFAULT_REPAIR_ATTEMPTS;
  const requestedBound = options.maxChangeFraction;
  if (!Number.isInteger(repairAttempts) || repairAttempts < 0) {
    throw new UserError(
      `optimizer: repairAttempts must be a whole number of at least 0, not ${repairAttempts}`,
    );
  }
  if (requestedBound !== undefined && !(requestedBound > 0 && requestedBound <= 1)) {
    throw new UserError(`optimizer: maxChangeFraction must be above 0 and at most 1, not ${requestedBound}`);
  }
  const bound = changeBound(input.current.design, requestedBound);
  const prompt = buildOptimizerPrompt(input, { ...options, maxChangeFraction: bound });
  const messages: ChatMessage[] = [
    { role: 'system', content: prompt.system },
    { role: 'user', content: prompt.user },
  ];
  const attempts: OptimizerAttempt[] = [];
  const shared = () => ({
    model: options.modelName,
    endpoint: model.endpoint,
    prompt,
    shown: shownToOptimizer(input),
    maxChangeFraction: bound ?? null,
    attempts,
    usage: totalUsage(attempts),
  });
  let repairsLeft = repairAttempts;
  let boundRetryUsed = false;
  let purpose: OptimizerAttempt['purpose'] = 'initial';

  for (;;) {
    const started = Date.now();
    const response = await trackModelCall(
      { role: 'optimizer', model: options.modelName, endpoint: model.endpoint, messages },
      () =>
        model.complete(
          { model: options.modelName, messages, sampling: options.sampling ?? OPTIMIZER_SAMPLING },
          { signal: options.signal },
        ),
    );
    const content = textOf(response.message.content);
    const record = {
      attempt: attempts.length + 1,
      purpose,
      message: textOf(messages.at(-1)!.content) ?? '',
      output: {
        content,
        reasoning: response.message.reasoning_content ?? null,
        finishReason: response.finishReason,
      },
      usage: response.usage,
      durationMs: Date.now() - started,
    };
    const parsed = parseOptimizerReply(content ?? '', input.current.design);

    if (!parsed.ok) {
      const errors =
        response.finishReason === 'length'
          ? [
              ...parsed.errors,
              'the reply was cut off at the output limit; write shorter instructions and no text outside the JSON',
            ]
          : parsed.errors;
      attempts.push({ ...record, outcome: { ok: false, reason: 'invalid-output', errors } });
      if (repairsLeft === 0) {
        return { ok: false, ...shared(), reason: 'invalid-output', errors, refusedProposal: null };
      }
      repairsLeft--;
      purpose = 'repair';
      messages.push(
        { role: 'assistant', content: content ?? '' },
        { role: 'user', content: repairMessage(errors) },
      );
      continue;
    }

    const changeFraction = parsed.diff.size.fraction;
    if (bound !== undefined && changeFraction > bound + BOUND_TOLERANCE) {
      const errors = [
        `the design changes ${percent(changeFraction)} of the current design; at most ${percent(bound)} may change in this iteration`,
      ];
      attempts.push({
        ...record,
        outcome: { ok: false, reason: 'change-bound-exceeded', errors, changeFraction },
      });
      if (boundRetryUsed) {
        return {
          ok: false,
          ...shared(),
          reason: 'change-bound-exceeded',
          errors,
          refusedProposal: parsed.proposal,
        };
      }
      boundRetryUsed = true;
      purpose = 'change-bound';
      messages.push(
        { role: 'assistant', content: content ?? '' },
        { role: 'user', content: boundMessage(changeFraction, bound) },
      );
      continue;
    }

    attempts.push({ ...record, outcome: { ok: true, changeFraction } });
    return {
      ok: true,
      ...shared(),
      proposal: parsed.proposal,
      changeFraction,
      diffText: renderWorkflowDiff(parsed.diff),
    };
  }
}

/** The stabiliser's bound as it applies to a proposal from `current`: none from free text or a draft. */
export function changeBound(current: TeamDesign, maxChangeFraction: number | undefined): number | undefined {
  return designForm(current) === 'structured' ? maxChangeFraction : undefined;
}

function repairMessage(errors: string[]): string {
  return [
    'Your reply could not be used:',
    ...errors.map((error) => `- ${error}`),
    '',
    'Reply again with the complete JSON object (design, changes, why, evidence_used, expected_impact, verification_checks) and nothing else. Keep the improvements you intended; fix only these problems.',
  ].join('\n');
}

function boundMessage(changeFraction: number, bound: number): string {
  return [
    `Your design changes ${percent(changeFraction)} of the current design; this iteration allows at most ${percent(bound)}.`,
    CHANGE_MEASURE,
    'Keep the changes the evidence supports most, put the rest back as they are in the current design, and reply again with the complete JSON object and nothing else.',
  ].join('\n');
}

function percent(fraction: number): string {
  return `${Math.round(fraction * 1000) / 10}%`;
}

function textOf(content: ChatMessage['content']): string | null {
  if (content === null) return null;
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

function totalUsage(attempts: OptimizerAttempt[]): TokenUsage {
  const total: TokenUsage = { promptTokens: 0, completionTokens: 0, reasoningTokens: 0, totalTokens: 0 };
  for (const attempt of attempts) {
    if (!attempt.usage) continue;
    total.promptTokens += attempt.usage.promptTokens;
    total.completionTokens += attempt.usage.completionTokens;
    total.reasoningTokens += attempt.usage.reasoningTokens;
    total.totalTokens += attempt.usage.totalTokens;
  }
  const cost = sumCallCosts(attempts.map((attempt) => attempt.usage));
  return cost ? { ...total, cost } : total;
}
