import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { describeEvaluation } from '../../src/evaluate/describe-evaluation.js';
import { EvaluationSummaryRecord } from '../../src/records/evaluation-records.js';

/**
 * The summary.json of a real `mass demo` run: L0, L1 and L2 on the demo tasks, the toy standing in as judge. Written by
 * an earlier version (record version 1, which marked the toy's models and judges `toy: true`).
 */
const demoSummary = fileURLToPath(new URL('../fixtures/evaluation/demo-summary.json', import.meta.url));

describe('the terminal summary of an evaluation', () => {
  it('shows every comparison and figure of the demo, and no agreement between evaluators who judged nothing in common', async () => {
    const summary = await EvaluationSummaryRecord.read(demoSummary);
    // Version 1's `toy: true` is read as version 2's stand-in label.
    expect(summary.models.map((model) => model.standIn)).toEqual(['toy', 'toy', 'toy']);
    expect(summary.judges.find((judge) => judge.name === 'toy-judge')!.standIn).toBe('toy');
    const emptyRows = summary.figures.agreement.filter((agreement) => agreement.items === 0);
    // Each self-judge judges only its own generation's pairs: self:L1 and self:L2 share none.
    expect(emptyRows.map((agreement) => agreement.evaluators)).toEqual([['self:L1', 'self:L2']]);

    const text = describeEvaluation(summary, 'runs/demo');
    for (const comparison of [
      'L1 (toy) against L0 (toy)',
      'L2 (toy) against L0 (toy)',
      'L2 (toy) against L1 (toy)',
    ]) {
      expect(text).toContain(comparison);
    }
    expect(text).toMatch(/L2 \(toy\)\s+bare\s+97\.7 \[95\.4, 100\.0\]/);
    expect(text).toContain('evaluation: oracle and toy-judge (toy): 100 %');
    expect(text).not.toContain('self:L1 (toy) and self:L2 (toy)');
    expect(text).not.toMatch(/over 0\b/);
    // Written before the episode pair was the unit, its figures are computed again from its inputs: L1 against L0 on
    // demo-potency is one decided pair of two (4 winning judgments and 4 ties), no longer [51, 100] with p 0.125.
    expect(summary.figures.settings.unit).toBe('episode pair');
    expect(text).toMatch(
      /demo-potency\s+100 % \[[23], 100\]\s+p 1\.00\s+1-0-1 of 2 pairs; judgments 4-0-4, official 100 %/,
    );
  });

  it('counts the selected runs that wrote to their judge beside those that changed a protected file; older runs as not scanned', async () => {
    const summary = await EvaluationSummaryRecord.read(demoSummary);
    // Written before it was counted: recomputed from the inputs, every selected run not scanned.
    expect(
      summary.figures.judgeDirectedText.map((entry) => [entry.generation, entry.selected, entry.scanned]),
    ).toEqual([
      ['L0', 4, 0],
      ['L1', 2, 0],
    ]);
    const figures = {
      ...summary.figures,
      judgeDirectedText: [
        {
          generation: 'L1',
          selected: 2,
          tampered: 0,
          scanned: 2,
          withText: 1,
          withTextRate: 0.5,
          spans: 3,
          characters: 412,
        },
      ],
    };
    const text = describeEvaluation({ ...summary, figures }, 'runs/demo');
    expect(text).toContain('Text addressing the judge');
    expect(text).toMatch(
      /L1 \(toy\)\s+1 of 2 scanned selected runs \(50 %\), 3 spans, 412 characters; 0 of 2 changed a protected file/,
    );
  });
});
