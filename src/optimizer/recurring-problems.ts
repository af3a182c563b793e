import { comparisonActionablePoints } from './comparison-points.js';
import type { PairwiseComparison } from '../records/optimizer-history.js';

/**
 * A checklist of problems that keep coming back in the search history, so the optimizer fixes causes rather than
 * the latest symptom. Derived deterministically from the comparisons: deliverables reported missing, failures and
 * team behaviour that repeat across runs, rubric areas criticised again and again, and a run of designs that lost.
 */

export interface RecurringProblem {
  kind: 'missing-deliverable' | 'execution-failure' | 'no-delegation' | 'rubric-area' | 'losing-streak';
  /** One line for the prompt's checklist. */
  text: string;
  /** 1-based numbers of the comparisons (in history order) where it appeared. */
  comparisons: number[];
}

export interface RecurringProblemOptions {
  /** Comparisons a problem must appear in to be listed (default 2). */
  minimumOccurrences?: number;
}

const ABSENCE =
  /\b(?:missing|lacks?|lacked|lacking|absent|omit(?:s|ted)?|no\b|without|never|not (?:produced|saved|found|present|included|written|generated|created)|did not (?:produce|save|write|include|generate|create)|empty|incomplete)/i;
const FILE_PATH = /`?((?:[\w.-]+\/)*[\w.-]+\.(?:md|json|csv|png|jpg|svg|pdf|py|txt|yaml|yml|ipynb))`?/gi;

const RUBRIC_AREAS: Array<{ name: string; pattern: RegExp }> = [
  {
    name: 'deliverable coverage',
    pattern: /\b(?:deliverables?|missing|absent|not (?:produced|saved|found))\b/i,
  },
  {
    name: 'numerical rigour',
    pattern:
      /\b(?:rigou?r|uncertaint\w*|confidence intervals?|statistic\w*|significan\w*|baselines?|leak\w*|overfit\w*|holdout|out-of-sample|sensitivity|robustness)\b/i,
  },
  {
    name: 'reproducibility',
    pattern: /\b(?:reproduc\w*|entry[- ]point|run\.py|seeds?|re-?run\w*|hard-?coded)\b/i,
  },
  {
    name: 'presentation',
    pattern: /\b(?:plots?|figures?|charts?|ax[ie]s|labels?|legend|sections?|write-?up)\b/i,
  },
  {
    name: 'engineering',
    pattern:
      /\b(?:tests?|crash\w*|exceptions?|traceback|bugs?|errors?|code quality|modular\w*|refactor\w*)\b/i,
  },
  { name: 'task alignment', pattern: /\b(?:the task|requirements?|asked|specification|scope|off-topic)\b/i },
];

export function recurringProblems(
  history: PairwiseComparison[],
  options: RecurringProblemOptions = {},
): RecurringProblem[] {
  const minimum = options.minimumOccurrences ?? 2;
  const sentencesByComparison = history.map((comparison) => comparisonActionablePoints(comparison, 50));
  return [
    ...missingDeliverables(sentencesByComparison, minimum),
    ...repeatedExecutionProblems(history, minimum),
    ...criticisedAreas(sentencesByComparison, minimum),
    ...losingStreak(history, minimum),
  ];
}

function missingDeliverables(sentencesByComparison: string[][], minimum: number): RecurringProblem[] {
  const seenIn = new Map<string, number[]>();
  sentencesByComparison.forEach((sentences, index) => {
    const paths = new Set<string>();
    for (const sentence of sentences) {
      if (!ABSENCE.test(sentence)) continue;
      for (const match of sentence.matchAll(FILE_PATH)) paths.add(match[1]!);
    }
    for (const path of paths) seenIn.set(path, [...(seenIn.get(path) ?? []), index + 1]);
  });
  return [...seenIn]
    .filter(([, comparisons]) => comparisons.length >= minimum)
    .map(([path, comparisons]) => ({
      kind: 'missing-deliverable',
      text: `"${path}" was reported missing or incomplete in ${comparisons.length} comparisons (${listNumbers(comparisons)}): make producing and checking it part of a contract.`,
      comparisons,
    }));
}

function repeatedExecutionProblems(history: PairwiseComparison[], minimum: number): RecurringProblem[] {
  const failuresByKind = new Map<string, { comparisons: number[]; latestDetail: string }>();
  const withoutDelegation: number[] = [];
  history.forEach((comparison, index) => {
    const execution = comparison.candidateExecution;
    if (!execution) return;
    if (execution.failure) {
      const entry = failuresByKind.get(execution.failure.kind) ?? { comparisons: [], latestDetail: '' };
      entry.comparisons.push(index + 1);
      entry.latestDetail = execution.failure.detail;
      failuresByKind.set(execution.failure.kind, entry);
    }
    if (execution.delegations === 0) withoutDelegation.push(index + 1);
  });
  const problems: RecurringProblem[] = [...failuresByKind]
    .filter(([, entry]) => entry.comparisons.length >= minimum)
    .map(([kind, entry]) => ({
      kind: 'execution-failure',
      text: `Runs failed with "${kind}" ${entry.comparisons.length} times (comparisons ${listNumbers(entry.comparisons)}); latest: ${entry.latestDetail}`,
      comparisons: entry.comparisons,
    }));
  if (withoutDelegation.length >= minimum) {
    problems.push({
      kind: 'no-delegation',
      text: `The orchestrator delegated nothing in ${withoutDelegation.length} runs (comparisons ${listNumbers(withoutDelegation)}): the team was not used; make the first hops and the subagents' contracts impossible to skip.`,
      comparisons: withoutDelegation,
    });
  }
  return problems;
}

function criticisedAreas(sentencesByComparison: string[][], minimum: number): RecurringProblem[] {
  const problems: RecurringProblem[] = [];
  for (const area of RUBRIC_AREAS) {
    const comparisons: number[] = [];
    let example = '';
    sentencesByComparison.forEach((sentences, index) => {
      const hit = sentences.find((sentence) => area.pattern.test(sentence));
      if (!hit) return;
      comparisons.push(index + 1);
      example = hit;
    });
    if (comparisons.length < minimum) continue;
    problems.push({
      kind: 'rubric-area',
      text: `${capitalise(area.name)} was criticised in ${comparisons.length} comparisons (${listNumbers(comparisons)}); latest: "${example}"`,
      comparisons,
    });
  }
  return problems;
}

function losingStreak(history: PairwiseComparison[], minimum: number): RecurringProblem[] {
  const comparisons: number[] = [];
  for (let index = history.length - 1; index >= 0 && history[index]!.winner !== 'candidate'; index--) {
    comparisons.unshift(index + 1);
  }
  if (comparisons.length < minimum) return [];
  return [
    {
      kind: 'losing-streak',
      text: `The last ${comparisons.length} candidates did not win (comparisons ${listNumbers(comparisons)}): their changes, shown in the history, did not help; try different ones.`,
      comparisons,
    },
  ];
}

function listNumbers(numbers: number[]): string {
  return numbers.join(', ');
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
