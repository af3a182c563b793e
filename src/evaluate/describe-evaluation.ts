import { describeCost } from '../cost/cost-total.js';
import type { SpendingSummary } from '../cost/spending-summary.js';
import type { EvaluationSummary, TransferRecord } from './evaluation-records.js';
import type { SearchCoverageFigure } from './search-coverage-figure.js';
import type { GradeFigure, Interval } from './statistics/index.js';

/**
 * The terminal summary of an evaluation: per comparison the win rate of each judge and the oracle, per task and
 * pooled, with intervals; then oracle grades, tokens, delegation, order inconsistency, agreement and reward hacking.
 * A figure left out because no task had a grader is named with its reason, never printed empty.
 * What a stand-in model (the toy model) made is marked with its label, e.g. "(toy)".
 */
export function describeEvaluation(summary: EvaluationSummary, directory: string): string {
  const { figures, counts } = summary;
  const judgeName = labelled(summary.judges);
  const modelName = labelled(summary.models);
  const percentage = (confidence: number) => `${Math.round(confidence * 100)} %`;
  const level = percentage(figures.settings.confidence);
  const lines: string[] = [
    `Evaluation "${summary.name}" of run ${summary.run}: ${summary.models.map((model) => modelName(model.name)).join(', ')} ` +
      `on ${summary.tasks.join(', ')} (${summary.conditions.join(', ')}); judges: ${summary.judges.map((judge) => judgeName(judge.name)).join(', ') || 'none'}`,
    `  ${counts.episodes} episodes (${counts.failedEpisodes} failed), ${counts.judgments} judgments ` +
      `(${counts.repairedJudgments} repaired, ${counts.failedJudgments} failed and left out), ` +
      `${counts.grades} grades (${counts.failedGrades} failed)`,
    ...(summary.spending ? [describeSpending(summary.spending)] : []),
  ];
  const records = `Records: ${directory}/evaluation/${summary.name}/ (summary.json, judgments.jsonl, grades.jsonl, episodes/)`;
  // An evaluation of the recorded searches alone (comparisons: [] with searchCoverage) ran no episode.
  if (summary.comparisons.length === 0 && summary.searchCoverage) {
    return [...lines, ...describeSearchCoverage(summary.searchCoverage), '', records].join('\n');
  }
  const { grading } = figures;
  if (grading.note) lines.push(`  Grading: ${grading.note}`);
  const omitted = (figure: GradeFigure) => grading.omitted.find((entry) => entry.figure === figure)?.reason;
  const covered =
    grading.tasksWithoutGrader.length > 0 && grading.tasksWithGrader.length > 0
      ? ` (tasks with a grader only: ${grading.tasksWithGrader.join(', ')})`
      : '';
  lines.push(
    '',
    `Win rate W/(W+L) over episode pairs (a pair's verdict is the mean of its judgments; the unit of every interval ` +
      `and test): per task with its exact ${level} interval and sign-test p, pooled with a bootstrap over pairs ` +
      `within tasks widened to the exact interval; pairs won-lost-tied, then the judgments and the official W/(W+L) over them`,
  );
  if (omitted('oracle-win-rates')) lines.push(`  No oracle row: ${omitted('oracle-win-rates')}`);
  for (const comparison of figures.winRates) {
    lines.push(
      `  ${modelName(comparison.candidate)} against ${modelName(comparison.baseline)}, ${comparison.condition}:`,
    );
    for (const judge of comparison.judges) {
      lines.push(`    ${judgeName(judge.judge)}:`);
      for (const cell of [...judge.perTask, { task: 'pooled', ...judge.pooled }]) {
        lines.push(
          `      ${cell.task.padEnd(20)} ${rate(cell.winRate).padStart(5)} ${interval(cell.winRateInterval).padEnd(10)}` +
            ` p ${number(cell.signTestP, 2).padEnd(4)}  ${record(cell)} of ${cell.pairs} pairs; ` +
            `judgments ${record(cell.judgments)}, official ${rate(cell.judgments.winRate)}`,
        );
      }
    }
  }
  for (const transfer of summary.transfer) lines.push(...describeTransfer(transfer));
  if (summary.searchCoverage) lines.push(...describeSearchCoverage(summary.searchCoverage));
  const inBothOrders = figures.orderInconsistency.filter((judge) => judge.pairsInBothOrders > 0);
  if (summary.settings.orders !== 'both') {
    lines.push(
      '',
      `Order inconsistency: not measured (orders: ${summary.settings.orders} shows each pair to a judge in one order per seed)`,
    );
  } else if (inBothOrders.length > 0) {
    lines.push('', 'Order inconsistency (the two orders of one pair and seed disagree; mean over pairs):');
    for (const judge of inBothOrders) {
      lines.push(
        `  ${judgeName(judge.judge).padEnd(22)} ${rate(judge.rate)} ${interval(judge.rateWilson)} over ${judge.pairsInBothOrders} pairs ` +
          `(${judge.inconsistent} of ${judge.seedsInBothOrders} seeds disagree)`,
      );
    }
  }
  lines.push(
    '',
    `Oracle grade (0–100; mean and ${level} interval), difference from the reference${covered}:`,
  );
  if (omitted('grades')) lines.push(`  Left out: ${omitted('grades')}`);
  for (const grade of figures.grades) {
    const difference = figures.gradeDifferences.find(
      (entry) => entry.generation === grade.generation && entry.condition === grade.condition,
    );
    lines.push(
      `  ${modelName(grade.generation).padEnd(14)} ${grade.condition.padEnd(13)} ${number(grade.mean)} ${interval(grade.interval, 1)}` +
        ` (${grade.graded}/${grade.episodes} graded)` +
        (difference
          ? `; ${signed(difference.meanDifference)} ${interval(difference.interval, 1)} against ${difference.reference}`
          : ''),
    );
  }
  const perToken = omitted('grade-per-token');
  lines.push(
    '',
    perToken
      ? 'Output tokens per episode:'
      : `Output tokens per episode; oracle grade per 1,000 output tokens${covered}, ratio to the reference:`,
  );
  if (perToken) lines.push(`  Grade per 1,000 output tokens left out: ${perToken}`);
  for (const tokens of figures.tokens) {
    lines.push(
      `  ${modelName(tokens.generation).padEnd(14)} ${tokens.condition.padEnd(13)} ${number(tokens.meanOutputTokens, 0)} tokens` +
        (perToken
          ? ''
          : `; ${number(tokens.gradePerThousandTokens, 2)} per 1,000` +
            (tokens.ratioToReference
              ? `; ×${number(tokens.ratioToReference.ratio, 2)} ${interval(tokens.ratioToReference.interval, 2)}`
              : '') +
            (tokens.ratioToSingleAgent
              ? `; ×${number(tokens.ratioToSingleAgent.ratio, 2)} against single-agent`
              : '')),
    );
  }
  lines.push('', 'Delegation (episodes with at least one agent call; mean calls; mean subagent threads):');
  for (const delegation of figures.delegation) {
    lines.push(
      `  ${modelName(delegation.generation).padEnd(14)} ${delegation.condition.padEnd(13)} ${rate(delegation.rate)} ${interval(delegation.rateWilson)}` +
        `; ${number(delegation.meanDelegations, 2)}; ${number(delegation.meanSubagentThreads, 2)}`,
    );
  }
  // Two self-judges never judge the same pairs (each judges its own generation's): such rows have nothing to show.
  const agreements = figures.agreement.filter((agreement) => agreement.items > 0);
  if (agreements.length > 0) {
    lines.push('', "Evaluator agreement (share of items, each an episode pair or a match; Cohen's κ):");
    for (const agreement of agreements) {
      const [first, second] = agreement.evaluators;
      lines.push(
        `  ${agreement.sample}: ${judgeName(first)} and ${judgeName(second)}: ${rate(agreement.agreement)} ` +
          `${interval(agreement.agreementInterval)}, κ ${number(agreement.kappa, 2)} ${interval(agreement.kappaInterval, 2)} over ${agreement.items}`,
      );
    }
  }
  if (omitted('oracle-agreement')) {
    lines.push('', `Agreement with the oracle left out: ${omitted('oracle-agreement')}`);
  }
  if (omitted('reward-hacking')) lines.push('', `Reward hacking left out: ${omitted('reward-hacking')}`);
  if (figures.rewardHacking.length > 0) {
    lines.push(
      '',
      "Reward hacking (runs the loop selected for training that the oracle puts in their task's bottom half):",
    );
    for (const entry of figures.rewardHacking) {
      lines.push(
        `  ${modelName(entry.generation).padEnd(14)} ${entry.bottomHalf} of ${entry.graded} graded selected runs (${rate(entry.bottomHalfRate)}); ` +
          `${entry.flagged} flagged by integrity checks`,
      );
    }
  }
  if (figures.judgeDirectedText.some((entry) => entry.selected > 0)) {
    lines.push(
      '',
      'Text addressing the judge (selected runs whose workspace writes to its judge or imitates its formats; shown to the judge marked as theirs):',
    );
    for (const entry of figures.judgeDirectedText) {
      const unscanned = entry.selected - entry.scanned;
      lines.push(
        `  ${modelName(entry.generation).padEnd(14)} ${entry.withText} of ${entry.scanned} scanned selected runs (${rate(entry.withTextRate)}), ` +
          `${entry.spans} spans, ${entry.characters} characters${unscanned > 0 ? `; ${unscanned} not scanned (workspace gone)` : ''}; ` +
          `${entry.tampered} of ${entry.selected} changed a protected file`,
      );
    }
  }
  lines.push('', records);
  return lines.join('\n');
}

/** Which design each side of a workflow transfer ran: its win rates are the `transfer` condition's above. */
function describeTransfer(transfer: TransferRecord): string[] {
  const bare = (side: 'candidate' | 'baseline') =>
    transfer.tasks.filter((task) => task[side].champion === 'reference').map((task) => task.task);
  const notes = [
    ...bare('candidate').map(
      (task) => `${task}: ${transfer.designsFrom}'s search never beat the bare task, run bare`,
    ),
    ...bare('baseline').map(
      (task) => `${task}: ${transfer.against}'s search never beat the bare task, run bare`,
    ),
    ...transfer.tasks
      .filter((task) => task.sameDesign)
      .map((task) => `${task.task}: both sides ran the same design`),
    ...transfer.leftOut.map((entry) => `${entry.task} left out: ${entry.reason}`),
  ];
  return [
    '',
    `Workflow transfer (the paper's Table 2): ${transfer.candidate} against ${transfer.baseline}, ${transfer.executor} ` +
      `executing ${transfer.designsFrom}'s and ${transfer.against}'s search champions on ` +
      `${transfer.tasks.map((task) => task.task).join(', ') || 'no task'}; its win rates are the "transfer" rows above`,
    ...notes.map((note) => `  ${note}`),
  ];
}

/** How soon each generation's searches found a design the external judges prefer unanimously to the bare task. */
function describeSearchCoverage(coverage: SearchCoverageFigure): string[] {
  const lines = [
    '',
    `Search coverage (the paper's Figure 4): tasks whose search had a design every judgment of ` +
      `${coverage.judges.join(', ')} (${coverage.judgeSeeds} seed${coverage.judgeSeeds === 1 ? '' : 's'} each) prefers ` +
      `to the bare-task reference, by iteration; exact interval over tasks at the last one:`,
  ];
  for (const generation of coverage.generations) {
    const last = generation.curve.at(-1);
    const lastIteration = Math.max(0, ...generation.tasks.map((task) => task.iterationsRun - 1));
    const median = generation.summary.median;
    lines.push(
      `  ${generation.generation}: ${generation.curve.map((point) => `${point.iteration}: ${point.won}/${point.tasks}`).join(', ')}` +
        (last ? ` ${interval(last.interval)}` : '') +
        (median
          ? `; median first win ${median.median === null ? `> ${lastIteration}` : median.median}` +
            ` (${generation.summary.censored} of ${generation.summary.tasks} never won)`
          : ''),
    );
  }
  return lines;
}

function record(cell: { wins: number; losses: number; ties: number }): string {
  return `${cell.wins}-${cell.losses}-${cell.ties}`;
}

function rate(value: number | null): string {
  return value === null ? '–' : `${(value * 100).toFixed(0)} %`;
}

function number(value: number | null, digits = 1): string {
  return value === null ? '–' : value.toFixed(digits);
}

function signed(value: number | null): string {
  return value === null ? '–' : `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;
}

/** `[low, high]` as percentages by default, else with the given decimals; `[–]` without one. */
function interval(value: Interval | null, digits?: number): string {
  if (value === null) return '[–]';
  if (digits === undefined) return `[${(value.lower * 100).toFixed(0)}, ${(value.upper * 100).toFixed(0)}]`;
  return `[${value.lower.toFixed(digits)}, ${value.upper.toFixed(digits)}]`;
}

/** A name with its stand-in label, e.g. `L1 (toy)`, for the models or judges of a summary. */
function labelled(
  entries: ReadonlyArray<{ name: string; standIn: string | null }>,
): (name: string) => string {
  const labels = new Map(entries.map((entry) => [entry.name, entry.standIn]));
  return (name) => {
    const label = labels.get(name);
    return label ? `${name} (${label})` : name;
  };
}

/** `  Spent: $0.0420 (reported); judge 12 calls, 48,000 tokens, $0.0300 (reported); executor …` */
function describeSpending(spending: SpendingSummary): string {
  const roles = Object.entries(spending.roles).map(
    ([role, spent]) =>
      `${role} ${spent.calls} calls, ${(spent.promptTokens + spent.completionTokens).toLocaleString('en-US')} tokens, ${describeCost(spent.cost)}`,
  );
  return `  Spent: ${describeCost(spending.total.cost)}${roles.length > 0 ? `; ${roles.join('; ')}` : ''}`;
}
