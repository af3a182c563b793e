import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { describeEvaluation } from '../../src/evaluate/describe-evaluation.js';
import { EvaluationSummaryRecord, type EvaluationSummary } from '../../src/records/evaluation-records.js';
import { computeEvaluationFigures } from '../../src/records/evaluation-statistics/index.js';
import type { RunReportData } from '../../src/report/read-run.js';
import { evaluationSection } from '../../src/report/sections/evaluation-section.js';

/** A real `mass demo` summary (L0, L1, L2 on demo-potency and demo-volatility), written before tasks could lack a grader. */
const demoSummary = fileURLToPath(new URL('../fixtures/evaluation/demo-summary.json', import.meta.url));

async function sectionText(summary: EvaluationSummary): Promise<string> {
  const data: Pick<RunReportData, 'evaluations'> = { evaluations: [{ name: summary.name, summary }] };
  const page = (await evaluationSection(data as RunReportData)).toString();
  return page
    .replace(/<svg[\s\S]*?<\/svg>/g, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, ' ');
}

/** The demo's evaluation again, as if demo-volatility had no grader: its episodes carry no grade. */
function withoutGraderFor(summary: EvaluationSummary, tasks: readonly string[]): EvaluationSummary {
  const rollouts = summary.inputs.rollouts.map((rollout) =>
    tasks.includes(rollout.task) ? { ...rollout, grade: null } : rollout,
  );
  const selectedRuns = summary.inputs.selectedRuns.map((run) =>
    tasks.includes(run.task) ? { ...run, grade: null, collectionGrades: [] } : run,
  );
  // The loop's sampled matches of such a task have no oracle verdict either.
  const agreementSamples = summary.inputs.agreementSamples.map((sample) => ({
    ...sample,
    verdicts: sample.verdicts.filter(
      (verdict) => verdict.evaluator !== 'oracle' || !tasks.includes(verdict.task),
    ),
  }));
  const inputs = {
    ...summary.inputs,
    rollouts,
    selectedRuns,
    agreementSamples,
    tasksWithoutGrader: [...tasks],
  };
  const figures = computeEvaluationFigures(
    {
      judgments: inputs.judgedPairs,
      rollouts,
      selectedRuns,
      agreementSamples,
      tasksWithoutGrader: tasks,
    },
    { ...summary.figures.settings, comparisons: summary.comparisons, resamples: 100 },
  );
  return { ...summary, figures, inputs };
}

describe('the evaluation section and terminal summary of tasks without a grader', () => {
  it('read an older summary as every task graded, and say nothing about grading', async () => {
    const summary = await EvaluationSummaryRecord.read(demoSummary);
    expect(summary.figures.grading).toEqual({
      tasksWithGrader: ['demo-potency', 'demo-volatility'],
      tasksWithoutGrader: [],
      loopTasksWithoutGrader: [],
      rolloutsWithoutGrader: 0,
      note: null,
      omitted: [],
    });
    expect(summary.inputs.tasksWithoutGrader).toEqual([]);
    const text = await sectionText(summary);
    expect(text).not.toContain('Grading:');
    expect(text).not.toContain('is left out:');
    expect(describeEvaluation(summary, 'runs/demo')).not.toContain('Grading:');
  });

  it('with a mix, name the graded tasks every grade figure covers', async () => {
    const summary = withoutGraderFor(await EvaluationSummaryRecord.read(demoSummary), ['demo-volatility']);
    const text = await sectionText(summary);
    const note =
      'The grade figures cover only the tasks with an objective grader (demo-potency); demo-volatility has none and rests on the external judges';
    expect(text).toContain(`Grading: ${note}`);
    expect(text).toMatch(/Mean oracle grade — .*bootstrap interval; tasks with a grader only: demo-potency/);
    expect(text).toMatch(/Grade per 1,000 output tokens — .*; tasks with a grader only: demo-potency/);
    expect(text).not.toContain('left out:');
    const terminal = describeEvaluation(summary, 'runs/demo');
    expect(terminal).toContain(`Grading: ${note}`);
    expect(terminal).toContain('difference from the reference (tasks with a grader only: demo-potency):');
    // The oracle's rows are about demo-potency alone.
    for (const comparison of summary.figures.winRates) {
      const oracle = comparison.judges.find((judge) => judge.judge === 'oracle')!;
      expect(oracle.perTask.map((cell) => cell.task)).toEqual(['demo-potency']);
    }
  });

  it('with no graded task, leave out every grade figure with its reason, never an empty chart', async () => {
    const summary = withoutGraderFor(await EvaluationSummaryRecord.read(demoSummary), [
      'demo-potency',
      'demo-volatility',
    ]);
    const text = await sectionText(summary);
    const reason =
      'no task in this evaluation has an objective grader: the evaluation rests on the external judges';
    for (const title of ['The oracle’s win rate', 'Mean oracle grade', 'Grade per 1,000 output tokens']) {
      expect(text).toContain(`${title} is left out: ${reason}.`);
    }
    expect(text).toContain(
      "Reward hacking is left out: no task of the loop's collections has an objective grader",
    );
    expect(text).not.toContain('nothing to draw yet');
    expect(summary.figures.agreement.flatMap((entry) => entry.evaluators)).not.toContain('oracle');
    expect(text).toContain(
      'Agreement with the oracle is left out: no judged pair belongs to a task with an objective grader',
    );
    const terminal = describeEvaluation(summary, 'runs/demo');
    expect(terminal).toContain(`Left out: ${reason}`);
    expect(terminal).toContain(
      "Reward hacking left out: no task of the loop's collections has an objective grader",
    );
    expect(terminal).not.toMatch(/^Reward hacking \(/m);
  });
});
