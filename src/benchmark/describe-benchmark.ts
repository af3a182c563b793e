import type { Interval } from '../statistics/interval.js';
import { textTable } from '../text-table.js';
import type { BenchmarkSummary } from '../records/benchmark-records.js';
import { OFFICIAL_COLUMNS, officialCaption, officialRows } from '../records/benchmark-official-figures.js';
import { describeInternet } from './task-environment.js';

/**
 * The terminal summary of one benchmark: per label the mean reward with its interval over tasks, output tokens per
 * trial, reward per 1,000 output tokens and its ratio to the reference, the delegation rate; then each task's row,
 * the skipped tasks with their reasons and the network each task's trials had. A stand-in's numbers (the toy
 * model's) are marked as such.
 */
export function describeBenchmark(summary: BenchmarkSummary): string {
  const toy = summary.standIn === null ? '' : ` (${summary.standIn} output: says nothing about a real model)`;
  const heading =
    `Benchmark ${summary.benchmark}${toy}: ${summary.tasks.length} task(s), ${summary.trialsPerTask} trial(s) per task, agent ${summary.agent}` +
    (summary.skipped.length > 0 ? `, ${summary.skipped.length} skipped` : '');
  const skipped = summary.skipped.map((entry) => `  ${entry.task}: ${entry.reason}`);
  const skippedSection = skipped.length > 0 ? ['', 'Skipped:', ...skipped] : [];
  if (summary.trials.length === 0) return [heading, '', 'No trial ran.', ...skippedSection].join('\n');
  const lines = [
    heading,
    '',
    ...textTable(
      [
        'label',
        'trials',
        'mean reward [95 % over tasks]',
        'unscored',
        'output tokens/trial',
        'reward/1k tokens',
        `ratio to ${summary.reference ?? '-'} [95 %]`,
        'delegation rate',
      ],
      summary.figures.map((figure) => [
        figure.label,
        String(figure.trials),
        `${number(figure.meanReward, 3)} ${interval(figure.meanRewardInterval, 3)}`,
        String(figure.unscored),
        number(figure.meanOutputTokens, 0),
        number(figure.rewardPerThousandTokens, 3),
        figure.ratioToReference === null
          ? '-'
          : `${number(figure.ratioToReference.value, 2)} ${interval(figure.ratioToReference.interval, 2)}`,
        figure.delegationRate === null ? '-' : `${Math.round(figure.delegationRate * 100)} %`,
      ]),
    ).map((line) => `  ${line}`),
    '',
    officialCaption(summary.official),
    ...textTable(OFFICIAL_COLUMNS, officialRows(summary.official)).map((line) => `  ${line}`),
    '',
    'Per task (mean reward, output tokens per trial, how many verifications ended how):',
    ...textTable(
      ['task', 'label', 'reward', 'tokens', 'verifications'],
      summary.perTask.map((row) => [
        row.task,
        row.label,
        number(row.meanReward, 2),
        number(row.meanOutputTokens, 0),
        Object.entries(row.statuses)
          .map(([status, count]) => `${count} ${status}`)
          .join(', '),
      ]),
    ).map((line) => `  ${line}`),
  ];
  const notes = verificationNotes(summary);
  if (notes.length > 0) {
    lines.push('', "Trials to look at (each trial's record keeps its verifier's output):", ...notes);
  }
  lines.push(...skippedSection);
  const networks = internetOfTasks(summary);
  if (networks.size > 0) {
    lines.push(
      '',
      'Internet (what the agent, the oracle and the verifier could reach):',
      ...[...networks].map(
        ([label, tasks]) => `  ${label} (${describeInternet(label)}): ${tasks.join(', ')}`,
      ),
    );
  }
  return lines.join('\n');
}

/** How many trials' notes are printed; the rest are counted. */
const NOTED_TRIALS = 20;

/**
 * What a trial's record says went wrong, one line each: the agent's failure (a `solve.sh` that failed, with its last
 * line) and the verification's note (a `setup-failed` verifier, a zero whose output says its test runner was missing).
 * Without it a dataset checked offline printed `oracle 0.00` and nothing of why.
 */
function verificationNotes(summary: BenchmarkSummary): string[] {
  const notes = summary.trials.flatMap((trial) => {
    const said = [
      trial.failure === null ? null : `the agent: ${trial.failure}`,
      trial.verification.detail === null
        ? null
        : `the verifier (${trial.verification.status}): ${trial.verification.detail}`,
    ].filter((note): note is string => note !== null);
    return said.map((note) => `  ${trial.task} ${trial.label} trial ${trial.trial}: ${oneLine(note)}`);
  });
  if (notes.length <= NOTED_TRIALS) return notes;
  return [
    ...notes.slice(0, NOTED_TRIALS),
    `  and ${notes.length - NOTED_TRIALS} more, in the summary's trials`,
  ];
}

function oneLine(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, ' | ');
  return flat.length > 300 ? `${flat.slice(0, 299)}…` : flat;
}

/** The tasks whose trials ran with each network (`internetLabel`), as their records say; older records say none. */
function internetOfTasks(summary: BenchmarkSummary): Map<string, string[]> {
  const networks = new Map<string, string[]>();
  for (const trial of summary.trials) {
    if (trial.internet === undefined) continue;
    const tasks = networks.get(trial.internet) ?? [];
    if (!tasks.includes(trial.task)) tasks.push(trial.task);
    networks.set(trial.internet, tasks);
  }
  return networks;
}

function number(value: number | null, digits: number): string {
  return value === null ? '-' : value.toFixed(digits);
}

function interval(value: Interval | null, digits: number): string {
  return value === null ? '[-]' : `[${value.lower.toFixed(digits)}, ${value.upper.toFixed(digits)}]`;
}
