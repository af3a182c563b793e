import { writeFile } from 'node:fs/promises';
import path from 'node:path';

import { readWindowSummaries, sampleWindows, writeTrainingData } from '../../distill/index.js';
import { TrainingDataStats, type DataCounts } from '../../records/index.js';
import { UserError } from '../../errors.js';

interface BuildOptions {
  episodes?: string[];
  validation?: string[];
  taskDir?: string[];
  modelDir?: string;
  allowTokenizerMismatch?: boolean;
  out: string;
  window: string;
  maxContext: string;
  headerFraction: string;
  singleAgent?: boolean;
  allowFailed?: boolean;
  verifyEveryTurn?: boolean;
  json?: boolean;
}

interface SampleOptions {
  data: string;
  split: string;
  steps: string;
  batchSize: string;
  seed: string;
  orchestratorProbability: string;
  plan?: string;
  json?: boolean;
}

export async function dataBuildAction(options: BuildOptions): Promise<void> {
  const episodes = [
    ...(options.episodes ?? []).map((dir) => ({ dir, split: 'train' as const })),
    ...(options.validation ?? []).map((dir) => ({ dir, split: 'validation' as const })),
  ];
  if (episodes.length === 0) {
    throw new UserError('no episodes: pass episode directories with --episodes (and --validation)');
  }
  const stats = await writeTrainingData({
    episodes,
    outDir: options.out,
    taskDirectories: options.taskDir,
    modelDirectory: options.modelDir,
    allowTokenizerMismatch: options.allowTokenizerMismatch,
    limits: {
      windowTokens: parseCount('--window', options.window, 1),
      maxContextTokens: parseCount('--max-context', options.maxContext, 0),
      maxHeaderFraction: parseShare('--header-fraction', options.headerFraction),
    },
    mode: options.singleAgent ? 'single-agent' : 'team',
    verify: options.verifyEveryTurn ? 'every-turn' : 'final-turn',
    allowFailed: options.allowFailed,
    onEpisode: options.json
      ? undefined
      : (dir, index, total) => console.error(`episode ${index + 1}/${total}: ${dir}`),
  });
  if (options.json) {
    process.stdout.write(TrainingDataStats.serialize(stats));
    return;
  }
  console.log(describeStats(stats, options.out));
}

export async function dataSampleAction(options: SampleOptions): Promise<void> {
  if (options.split !== 'train' && options.split !== 'validation') {
    throw new UserError(`--split "${options.split}": use train or validation`);
  }
  const windows = await readWindowSummaries(options.data, options.split);
  const steps = parseCount('--steps', options.steps, 1);
  const batchSize = parseCount('--batch-size', options.batchSize, 1);
  const orchestratorProbability = parseShare(
    '--orchestrator-probability',
    options.orchestratorProbability,
    true,
  );
  const plan = sampleWindows(windows, {
    steps,
    batchSize,
    seed: parseCount('--seed', options.seed, 0),
    orchestratorProbability,
  });
  if (options.plan) {
    const lines: string[] = [];
    for (let step = 0; step < steps; step++) {
      const ids = [...plan.draws.subarray(step * batchSize, (step + 1) * batchSize)].map(
        (index) => windows[index]!.id,
      );
      lines.push(`${JSON.stringify({ step, windows: ids })}\n`);
    }
    await writeFile(options.plan, lines.join(''));
  }
  const summary = {
    windows: windows.length,
    steps,
    batchSize,
    orchestratorProbability,
    storedSupervisedTokens: plan.storedSupervisedTokens,
    expectedProcessedSupervisedTokens: plan.expectedProcessedSupervisedTokens,
    processedSupervisedTokens: plan.processedSupervisedTokens,
  };
  if (options.json) {
    console.log(JSON.stringify(summary, null, 2));
    return;
  }
  console.log(
    [
      `${windows.length} windows, ${formatTokens(plan.storedSupervisedTokens)} supervised tokens stored`,
      `${steps} steps × ${batchSize} windows, orchestrator probability ${orchestratorProbability}:`,
      `  expected ${formatTokens(plan.expectedProcessedSupervisedTokens)} supervised tokens processed`,
      `  this seed ${formatTokens(plan.processedSupervisedTokens)}`,
    ].join('\n'),
  );
}

function parseCount(flag: string, value: string, minimum: number): number {
  const count = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(count) || count < minimum) {
    throw new UserError(`${flag} "${value}": use a whole number of at least ${minimum}`);
  }
  return count;
}

/** A number in (0, 1], or [0, 1] with `zeroAllowed`; `1/3` is accepted as well as `0.333`. */
function parseShare(flag: string, value: string, zeroAllowed = false): number {
  const share = value.includes('/') ? fraction(value) : Number(value);
  if (
    value.trim() === '' ||
    !Number.isFinite(share) ||
    share < 0 ||
    (share === 0 && !zeroAllowed) ||
    share > 1
  ) {
    throw new UserError(
      `${flag} "${value}": use a number ${zeroAllowed ? 'from 0' : 'above 0 and up'} to 1, e.g. 0.5 or 1/3`,
    );
  }
  return share;
}

function fraction(value: string): number {
  const [numerator, denominator] = value.split('/').map(Number);
  return numerator! / denominator!;
}

function formatTokens(count: number): string {
  return count >= 1e6 ? `${(count / 1e6).toFixed(2)} M` : Math.round(count).toLocaleString('en-US');
}

function describeStats(stats: TrainingDataStats, outDir: string): string {
  const line = (label: string, counts: DataCounts) =>
    `  ${label.padEnd(14)} ${String(counts.windows).padStart(6)} windows  ${formatTokens(counts.supervisedTokens).padStart(10)} supervised  ${formatTokens(counts.tokens).padStart(10)} tokens`;
  const lines = [`training data in ${path.resolve(outDir)} (${stats.mode}, ${stats.model})`];
  if (stats.tokenizer && stats.tokenizer.verdict !== 'same-family') {
    const served = stats.tokenizer.served.map((entry) => `"${entry.model}"`).join(', ');
    lines.push(
      stats.tokenizer.verdict === 'unverified'
        ? `  the tokenizer could not be compared with the served model ${served} (a family is unknown from the names)`
        : `  the tokenizer's family differs from the served model ${served}'s (allowed)`,
    );
  }
  for (const [split, splitStats] of Object.entries(stats.splits)) {
    if (splitStats.episodes === 0) continue;
    lines.push(`${split}: ${splitStats.episodes} episodes`);
    lines.push(line('all', splitStats.total));
    for (const [role, counts] of Object.entries(splitStats.perRole)) {
      if (counts.threads > 0) lines.push(line(role, counts));
    }
    for (const [task, taskStats] of Object.entries(splitStats.perTask))
      lines.push(line(task, taskStats.total));
    const textArguments = splitStats.toolCalls?.argumentsAsText ?? 0;
    if (textArguments > 0) {
      lines.push(
        `  ${textArguments} of ${splitStats.toolCalls!.calls} tool calls had arguments that are not a JSON object: rendered as text (stats.json lists the turns)`,
      );
    }
    if (splitStats.truncatedResponses > 0) {
      lines.push(`  ${splitStats.truncatedResponses} responses cut by the length limit, not trained on`);
    }
    const reasons = new Map<string, number>();
    for (const item of splitStats.skipped) reasons.set(item.reason, (reasons.get(item.reason) ?? 0) + 1);
    for (const [reason, count] of reasons)
      lines.push(`  skipped: ${count} × ${reason} (details in stats.json)`);
  }
  return lines.join('\n');
}
