import { describe, expect, it } from 'vitest';

import { visualCheckPhrases } from '../../src/workflow/visual-checks.js';

describe('visual checks in a text', () => {
  it('finds requests to look at a picture', () => {
    expect(
      visualCheckPhrases(
        'Rerun python3 run.py; compare the report with results/; check curves against the plotted data.',
      ),
    ).toEqual(['check curves against the plotted']);
    expect(visualCheckPhrases('Look at the curves before you rank.')).toEqual(['Look at the curves']);
    expect(visualCheckPhrases('Inspect the residual histograms.')).toEqual([
      'Inspect the residual histograms',
    ]);
    expect(visualCheckPhrases('Check the figure.')).toEqual(['Check the figure']);
    expect(visualCheckPhrases('Visually confirm the fit.')).toEqual(['Visually confirm the fit']);
  });

  it('leaves alone plots that are made, files that are named, and checks on numbers', () => {
    for (const text of [
      'Fit a Hill model per compound, compare with an alternative analysis for the ablation, and write results/potency.csv, metrics, plots and run.py.',
      'Save the figure to deliverables/plots/fit.png and check that deliverables/plots/fit.png exists.',
      'Check the fitted curves against the data: residuals below 5 %.',
      'Draw a plot of the residuals; check the residuals numerically.',
    ]) {
      expect(visualCheckPhrases(text), text).toEqual([]);
    }
  });
});
