import { writeFile } from 'node:fs/promises';

import { ModelBehaviourError, UserError } from '../../errors.js';
import {
  buildWorkspaceBundle,
  DEFAULT_JUDGE_SAMPLING,
  judgePair,
  locateWorkspace,
  type WorkspaceBundle,
  type WorkspaceSource,
} from '../../judge/index.js';
import { PairwiseJudgmentRecord, type PairwiseJudgment } from '../../records/index.js';
import { createChatModel } from '../../model/create-model.js';
import { recognisedProvider } from '../../model/provider.js';
import { samplingProblems, type ChatProvider } from '../../model/request-parameters.js';
import { loadTokenCounter } from '../../model/token-counter.js';
import { REASONING_EFFORTS, type ReasoningEffort } from '../../model/reasoning-effort.js';
import type { SamplingParams } from '../../model/types.js';
import { loadTask } from '../../tasks/load-task.js';
import { parsePositiveInteger } from '../duration.js';

interface JudgeFlags {
  task: string;
  model: string;
  provider: string;
  baseUrl?: string;
  apiKeyEnv?: string;
  mode: string;
  seed: string;
  repairs: string;
  maxTokens: string;
  temperature?: string;
  thinking: boolean;
  thinkingBudget?: string;
  reasoningEffort?: string;
  budget: string;
  tokenizer?: string;
  out?: string;
  json?: boolean;
}

export async function judgeAction(workspaceA: string, workspaceB: string, flags: JudgeFlags): Promise<void> {
  if (flags.mode !== 'random' && flags.mode !== 'both') {
    throw new UserError(`--mode "${flags.mode}": use random or both`);
  }
  const seed = parsePositiveInteger(flags.seed, '--seed');
  const maxRepairAttempts = parsePositiveInteger(flags.repairs, '--repairs');
  const maxTokens = parsePositiveInteger(flags.maxTokens, '--max-tokens');
  const totalTokens = parsePositiveInteger(flags.budget, '--budget');
  const provider = parseProvider(flags.provider, flags.baseUrl);
  const sampling = judgeSampling(provider, flags, maxTokens);
  const problems = samplingProblems(provider, sampling);
  if (problems.length > 0) throw new UserError(`${problems.join('; ')}: change the flags`);

  const task = await loadTask(flags.task);
  // Find both workspaces before the tokenizer takes its second or two to load.
  const locationA = await locateWorkspace(workspaceA);
  const locationB = await locateWorkspace(workspaceB);
  const tokenCounter = await loadTokenCounter(flags.tokenizer);
  const bundle = (location: WorkspaceSource) =>
    buildWorkspaceBundle({ task, location, tokenCounter, budget: { totalTokens } });
  const [bundleA, bundleB] = await Promise.all([bundle(locationA), bundle(locationB)]);

  const model = createChatModel({ provider, baseUrl: flags.baseUrl, apiKeyEnv: flags.apiKeyEnv });
  const judgment = await judgePair({
    task,
    x: { label: workspaceA, bundle: bundleA },
    y: { label: workspaceB, bundle: bundleB },
    model,
    modelName: flags.model,
    mode: flags.mode,
    seed,
    maxRepairAttempts,
    sampling,
  });

  const record = PairwiseJudgmentRecord.serialize(judgment);
  if (flags.out) await writeFile(flags.out, record);
  if (flags.json) process.stdout.write(record);
  else console.log(describeJudgment(judgment, bundleA, bundleB));
  if (judgment.status === 'failed') {
    const error = new ModelBehaviourError(`the judge gave no valid verdict: ${judgment.failure}`);
    console.error(`mass: ${error.message}`);
    process.exitCode = error.exitCode;
  }
}

function parseProvider(text: string, baseUrl: string | undefined): ChatProvider {
  if (text !== 'openai-compatible' && text !== 'openai' && text !== 'anthropic') {
    throw new UserError(`--provider "${text}": use openai-compatible, openai or anthropic`);
  }
  if (text === 'openai-compatible' && baseUrl === undefined) {
    throw new UserError(
      '--base-url is needed for an openai-compatible server, e.g. http://127.0.0.1:8000/v1',
    );
  }
  return recognisedProvider(text, baseUrl);
}

/** The judge's request settings for its provider: the paper's on vLLM, only what was asked for elsewhere. */
function judgeSampling(provider: ChatProvider, flags: JudgeFlags, maxTokens: number): SamplingParams {
  const temperature = flags.temperature === undefined ? undefined : parseTemperature(flags.temperature);
  const reasoningEffort =
    flags.reasoningEffort === undefined ? undefined : parseEffort(flags.reasoningEffort);
  const refuse = (flag: string) => {
    throw new UserError(`${flag} is not for --provider ${provider}`);
  };
  if (flags.thinkingBudget !== undefined && provider !== 'anthropic') refuse('--thinking-budget');
  if (provider === 'openai-compatible') {
    return {
      ...DEFAULT_JUDGE_SAMPLING,
      temperature: temperature ?? DEFAULT_JUDGE_SAMPLING.temperature,
      maxTokens,
      enableThinking: flags.thinking,
      ...(reasoningEffort ? { reasoningEffort } : {}),
    };
  }
  if (provider === 'openai') {
    if (!flags.thinking) refuse('--no-thinking (use --reasoning-effort none)');
    return {
      maxTokens,
      ...(temperature === undefined ? {} : { temperature }),
      ...(reasoningEffort ? { reasoningEffort } : {}),
    };
  }
  if (temperature !== undefined) refuse('--temperature (Anthropic takes no sampling parameters)');
  const thinking = !flags.thinking
    ? 'disabled'
    : flags.thinkingBudget === 'adaptive'
      ? 'adaptive'
      : flags.thinkingBudget === undefined
        ? undefined
        : { budgetTokens: parsePositiveInteger(flags.thinkingBudget, '--thinking-budget') };
  return { maxTokens, ...(thinking ? { thinking } : {}), ...(reasoningEffort ? { reasoningEffort } : {}) };
}

function parseEffort(text: string): ReasoningEffort {
  if (!(REASONING_EFFORTS as readonly string[]).includes(text)) {
    throw new UserError(`--reasoning-effort "${text}": use one of ${REASONING_EFFORTS.join(', ')}`);
  }
  return text as ReasoningEffort;
}

function parseTemperature(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0) {
    throw new UserError(`--temperature "${text}": use a number from 0 up, e.g. 0.6`);
  }
  return value;
}

function describeJudgment(
  judgment: PairwiseJudgment,
  bundleA: WorkspaceBundle,
  bundleB: WorkspaceBundle,
): string {
  const label = (side: 'x' | 'y') => (side === 'x' ? judgment.x.label : judgment.y.label);
  const outcome =
    judgment.status === 'failed'
      ? `no verdict (${judgment.failure})`
      : judgment.winner === 'tie'
        ? 'tie'
        : `winner ${label(judgment.winner!)}`;
  const lines = [`${judgment.task}: ${outcome}`];
  judgment.judgments.forEach((single, index) => {
    const verdict =
      single.status === 'ok'
        ? `verdict ${single.verdict!.winner}${single.winner === 'tie' ? '' : ` (${label(single.winner!)})`}`
        : 'no valid verdict';
    lines.push(
      `  judgment ${index + 1}: ${label(single.shownAsA)} shown as A; ${verdict} after ${single.attempts.length} attempt(s)`,
    );
    if (single.verdict) lines.push(`    ${single.verdict.rationale}`);
  });
  if (judgment.mode === 'both' && judgment.ordersAgree === false) {
    lines.push('  the two orders disagreed: counted as a tie');
  }
  const describeBundle = (name: string, bundle: WorkspaceBundle) => {
    const ok = bundle.summary.preflight.filter((check) => check.status === 'ok').length;
    const tampered = bundle.summary.integrity.tampered ? '; protected files changed' : '';
    return `  bundle of ${name}: ${bundle.tokens} tokens; ${ok} of ${bundle.summary.preflight.length} deliverables pass the preflight${tampered}`;
  };
  lines.push(describeBundle(judgment.x.label, bundleA), describeBundle(judgment.y.label, bundleB));
  lines.push(
    `  usage: ${judgment.usage.promptTokens} prompt and ${judgment.usage.completionTokens} completion tokens`,
  );
  return lines.join('\n');
}
