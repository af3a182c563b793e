import { sumCallCosts } from '../cost/call-cost.js';
import { billedUsageOf } from '../model/billed-usage.js';
import { createHash } from 'node:crypto';

import { ModelBehaviourError, errorMessage } from '../errors.js';
import type { ChatMessage, ChatModel, SamplingParams, TokenUsage } from '../model/types.js';
import type { LoadedTask } from '../tasks/load-task.js';
import { renderTaskPrompt } from '../tasks/render-prompt.js';
import type { WorkspaceBundle } from './bundle.js';
import { trackModelCall } from './open-model-calls.js';
import { DEFAULT_JUDGE_SAMPLING, DEFAULT_MAX_REPAIR_ATTEMPTS } from './judge-defaults.js';
import { judgeSystemPrompt, judgeUserPrompt, repairPrompt } from './judge-prompt.js';
import {
  PairwiseJudgmentRecord,
  type JudgeAttempt,
  type EvaluationOrders,
  type JudgeUsage,
  type PairSide,
  type PairWinner,
  type PairwiseJudgment,
  type SingleJudgment,
} from '../records/judgment-record.js';
import { renderSharedFiles, shareFiles, workspaceNames, type SharedFiles } from './shared-files.js';
import { officialSwap } from './python-random.js';
import { parseVerdict } from '../records/verdict.js';

export interface JudgedWorkspace {
  /** How the caller names it in the record (an episode id, a path); never shown to the judge. */
  label: string;
  bundle: WorkspaceBundle;
}

export interface JudgePairOptions {
  task: LoadedTask;
  x: JudgedWorkspace;
  y: JudgedWorkspace;
  model: ChatModel;
  /** The model name the server serves. */
  modelName: string;
  /** Default `random`. */
  mode?: EvaluationOrders;
  /** Draws the A/B order in `random` and `official` mode (default 0). */
  seed?: number;
  /** Mixed with the seed; default: the two labels. Give each pair of a tournament its own. */
  orderKey?: string;
  /** Default `DEFAULT_JUDGE_SAMPLING`. */
  sampling?: SamplingParams;
  /** Repairs after an unusable reply before the judgment is recorded as failed (default 2). */
  maxRepairAttempts?: number;
  signal?: AbortSignal;
}

/**
 * Compares two workspaces of one task. `random`: one judgment with the A/B order drawn from the seed and the order
 * key. `official`: one judgment, x shown first unless the official code's draw from the seed swaps the pair. `both`: one judgment per order; when they disagree the pair is a tie, which cancels the judge's position bias.
 * A reply that is not a valid verdict is sent back for repair a bounded number of times; if none works, the judgment
 * is recorded as failed, never as a tie. Failures of the server itself (after the client's retries) are thrown.
 */
export async function judgePair(options: JudgePairOptions): Promise<PairwiseJudgment> {
  const startedAt = new Date();
  const mode = options.mode ?? 'random';
  const seed = options.seed ?? 0;
  const orderKey = options.orderKey ?? `${options.x.label}\n${options.y.label}`;
  const sampling = options.sampling ?? DEFAULT_JUDGE_SAMPLING;
  const maxRepairAttempts = options.maxRepairAttempts ?? DEFAULT_MAX_REPAIR_ATTEMPTS;
  const system = judgeSystemPrompt(options.task.judge);
  const taskText = renderTaskPrompt(options.task);
  // Shared files are found once for the pair: bundleA is x's text here, bundleB y's.
  const shared = shareFiles(options.x.bundle, options.y.bundle);

  const run = (shownAsA: PairSide) =>
    judgeOnce({ ...options, sampling, maxRepairAttempts, shownAsA, system, taskText, shared });
  const judgments =
    mode === 'both'
      ? await Promise.all([run('x'), run('y')])
      : [await run(singleOrder(mode, seed, orderKey))];

  const failed = judgments.filter((judgment) => judgment.status === 'failed');
  let winner: PairWinner | null = null;
  let ordersAgree: boolean | null = null;
  let failure: string | null = null;
  if (failed.length > 0) {
    failure =
      mode === 'both'
        ? `${failed.length} of 2 orders gave no valid verdict: ${failed.map((judgment) => judgment.failure).join('; ')}`
        : failed[0]!.failure;
  } else if (mode === 'both') {
    ordersAgree = judgments[0]!.winner === judgments[1]!.winner;
    winner = ordersAgree ? judgments[0]!.winner : 'tie';
  } else {
    winner = judgments[0]!.winner;
  }

  return PairwiseJudgmentRecord.schema.parse({
    task: options.task.manifest.id,
    mode,
    seed,
    orderKey,
    model: options.modelName,
    sampling: { ...sampling },
    maxRepairAttempts,
    x: { label: options.x.label, bundle: options.x.bundle.summary },
    y: { label: options.y.label, bundle: options.y.bundle.summary },
    sharedFiles: shared.paths,
    sharedFilesDiffering: shared.files.filter((file) => file.difference).map((file) => file.path),
    judgments,
    status: failed.length > 0 ? 'failed' : 'decided',
    winner,
    ordersAgree,
    failure,
    usage: sumUsage(judgments.map((judgment) => judgment.usage)),
    startedAt: startedAt.toISOString(),
    durationMs: Date.now() - startedAt.getTime(),
  });
}

/** The side shown as A in a mode that shows a pair once: `official`'s draw from the seed alone, else `randomOrder`. */
export function singleOrder(mode: 'random' | 'official', seed: number, orderKey: string): PairSide {
  return mode === 'official' ? (officialSwap(seed) ? 'y' : 'x') : randomOrder(seed, orderKey);
}

/** The side shown as A, drawn from the seed and the order key: reproducible, independent across pairs. */
export function randomOrder(seed: number, orderKey: string): PairSide {
  const digest = createHash('sha256').update(`${seed}\u0000${orderKey}`).digest();
  return (digest[0]! & 1) === 0 ? 'x' : 'y';
}

async function judgeOnce(
  options: JudgePairOptions & {
    shownAsA: PairSide;
    system: string;
    taskText: string;
    sampling: SamplingParams;
    maxRepairAttempts: number;
    shared: SharedFiles;
  },
): Promise<SingleJudgment> {
  const { shared } = options;
  const [bundleA, bundleB] =
    options.shownAsA === 'x' ? [shared.bundleA, shared.bundleB] : [shared.bundleB, shared.bundleA];
  const user = judgeUserPrompt({
    taskText: options.taskText,
    bundleA,
    bundleB,
    sameInBoth: renderSharedFiles(shared, workspaceNames(options.shownAsA === 'y')),
  });
  const conversation: ChatMessage[] = [
    { role: 'system', content: options.system },
    { role: 'user', content: user },
  ];
  const attempts: JudgeAttempt[] = [];
  let repairRequest: string | null = null;
  for (let attempt = 1; attempt <= options.maxRepairAttempts + 1; attempt++) {
    const messages: ChatMessage[] =
      repairRequest === null
        ? conversation
        : [
            ...conversation,
            { role: 'assistant', content: attempts.at(-1)!.rawOutput },
            { role: 'user', content: repairRequest },
          ];
    const started = performance.now();
    const recorded = await callJudge(options, messages);
    const parse = parseReply(recorded.rawOutput, recorded.finishReason, recorded.callError);
    attempts.push({
      attempt,
      repairRequest,
      rawOutput: recorded.rawOutput,
      reasoning: recorded.reasoning,
      finishReason: recorded.finishReason,
      parse: parse.ok ? { ok: true, verdict: parse.value } : { ok: false, error: parse.error },
      usage: recorded.usage,
      latencyMs: Math.round(performance.now() - started),
    });
    if (parse.ok) {
      return {
        shownAsA: options.shownAsA,
        prompt: { system: options.system, user },
        status: 'ok',
        verdict: parse.value,
        winner: toCallerTerms(parse.value.winner, options.shownAsA),
        failure: null,
        attempts,
        usage: sumUsage(attempts.map((item) => item.usage)),
      };
    }
    repairRequest = repairPrompt(parse.error);
  }
  const lastError = attempts.at(-1)!.parse;
  return {
    shownAsA: options.shownAsA,
    prompt: { system: options.system, user },
    status: 'failed',
    verdict: null,
    winner: null,
    failure: `no valid verdict after ${attempts.length} attempt${attempts.length === 1 ? '' : 's'}: ${lastError.ok ? '' : lastError.error}`,
    attempts,
    usage: sumUsage(attempts.map((item) => item.usage)),
  };
}

interface RecordedCall {
  rawOutput: string;
  reasoning: string | null;
  finishReason: string | null;
  usage: JudgeUsage | null;
  /** The client gave up on the reply as unusable (no choices, a malformed message). */
  callError?: string;
}

async function callJudge(options: JudgePairOptions, messages: ChatMessage[]): Promise<RecordedCall> {
  try {
    const response = await trackModelCall(
      { role: 'judge', model: options.modelName, endpoint: options.model.endpoint, messages },
      () =>
        options.model.complete(
          { model: options.modelName, messages, sampling: options.sampling },
          { signal: options.signal },
        ),
    );
    const content = response.message.content;
    return {
      rawOutput: typeof content === 'string' ? content : JSON.stringify(content ?? ''),
      reasoning: response.message.reasoning_content ?? null,
      finishReason: response.finishReason,
      usage: response.usage ? toJudgeUsage(response.usage) : null,
    };
  } catch (error) {
    // The model answered but unusably: that is the judge misbehaving, which a repair may fix. Anything else (the
    // server down, a wrong model name) is no judgment at all and goes to the caller.
    if (!(error instanceof ModelBehaviourError)) throw error;
    // An unusable answer was billed all the same.
    const billed = billedUsageOf(error);
    return {
      rawOutput: '',
      reasoning: null,
      finishReason: null,
      usage: billed ? toJudgeUsage(billed) : null,
      callError: errorMessage(error),
    };
  }
}

function parseReply(rawOutput: string, finishReason: string | null, callError: string | undefined) {
  if (callError !== undefined)
    return { ok: false as const, error: `the server's reply was unusable (${callError})` };
  const parsed = parseVerdict(rawOutput);
  if (!parsed.ok && finishReason === 'length') {
    return {
      ok: false as const,
      error: `the reply was cut off at the output limit before the verdict (${parsed.error})`,
    };
  }
  return parsed;
}

function toCallerTerms(winner: 'A' | 'B' | 'tie', shownAsA: PairSide): PairWinner {
  if (winner === 'tie') return 'tie';
  const other: PairSide = shownAsA === 'x' ? 'y' : 'x';
  return winner === 'A' ? shownAsA : other;
}

function toJudgeUsage(usage: TokenUsage): JudgeUsage {
  return {
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    reasoningTokens: usage.reasoningTokens,
    totalTokens: usage.totalTokens,
    ...(usage.cost ? { cost: usage.cost } : {}),
  };
}

function sumUsage(usages: ReadonlyArray<JudgeUsage | null>): JudgeUsage {
  const total: JudgeUsage = { promptTokens: 0, completionTokens: 0, reasoningTokens: 0, totalTokens: 0 };
  for (const usage of usages) {
    if (!usage) continue;
    total.promptTokens += usage.promptTokens;
    total.completionTokens += usage.completionTokens;
    total.reasoningTokens += usage.reasoningTokens;
    total.totalTokens += usage.totalTokens;
  }
  const cost = sumCallCosts(usages);
  return cost ? { ...total, cost } : total;
}
