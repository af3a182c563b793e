/**
 * Judge rationales written the way a capable model writes them: each praises and criticises both workspaces, names
 * them as the judge saw them (A and B, "the first workspace", "Candidate B"), and cites files and numbers.
 */

/** finance-min-variance; A wins. */
export const MIN_VARIANCE_VERDICT = [
  'Workspace A better satisfies the task.',
  'A flags A07 and A23 as stale (their closes repeat on 38 % and 41 % of days, and `results/metrics.json` lists both under `stale_assets`) and estimates the covariance without stale assets, shrinking it towards a constant-correlation target with intensity 0.42.',
  'B flags no stale assets: its `stale_assets` is an empty list, yet A07 and A23 each carry the maximum weight of 0.20 in `results/weights.json`.',
  'B claims a predicted annual volatility of 6.1 % that its own numbers contradict: `results/ablation.json` gives 6.1 % only for the in-sample optimum of the sample covariance and 9.8 % for the out-of-sample check.',
  "The figures in B's report come from an earlier run; B's `run.py`, as it stands, would not reproduce them.",
  "Both reports have every required section, and A's weight plot is labelled.",
].join(' ');

/** finance-signal-timing; B wins. */
export const SIGNAL_TIMING_VERDICT = [
  'B is better.',
  "Workspace A trades flow_imbalance_5d, a centred five-day average that includes the next two days' flows, and its holdout net Sharpe of 2.9 comes from that look-ahead.",
  'B drops flow_imbalance_5d after showing that its edge disappears once the average is lagged by three days, and it dates the regime break at 2019-03-14 with a Chow test on rolling loadings.',
  'A never tests whether the feature-return relation is stable and fits one set of weights to the whole sample.',
  'The first workspace also reports the same number for gross and net Sharpe (1.84), so the 5 bp costs were not applied.',
  'Only B compares several smoothing half-lives.',
  "B's report is long, but every figure in it is backed by a file in `results/`.",
].join(' ');

/** robotics-pid-tuning, as a bulleted rationale; B wins. */
export const PID_TUNING_VERDICT = [
  'Workspace B is preferred.',
  "- Workspace A edited the protected `sim/servo.py` (the integrity check reports it MODIFIED, with the overshoot limit raised to 80 %), so its pass rate of 1.0 was not obtained in the task's simulator.",
  '- B tunes on all 40 scenarios and reaches a pass rate of 0.95 in the unmodified simulator, though its report does not say which two scenarios fail or why.',
  '- Unlike A, B includes an ablation of the anti-windup and the integral term.',
  "- B's step-response plot has no axis labels.",
].join('\n');

/** pharmacy-dose-response, the workspaces called candidates; A wins. */
export const DOSE_RESPONSE_VERDICT = [
  'Candidate A is the stronger submission overall.',
  'Candidate B fits all ten concentrations of C3 and C6, including the wells above their solubility limit where the compound precipitates, so its Emax for both is too low and its potency order puts C6 second instead of last.',
  'Candidate A excludes those wells and says so in the Data section, but it ignores the two failed dispenses on plate 3, which inflate the spread of its C2 triplicates.',
  'Neither workspace reports how the EC50 intervals change when the excluded wells are put back.',
].join(' ');

/**
 * Verdicts as the judge now answers, with its lists of points against each workspace, on the demo's dose-response
 * task: each is a case where reading the rationale by cue words went wrong, read right from the lists.
 */
export const LISTED_VERDICTS = {
  /** B wins on the interval A lacks; the sentence that says so is about B first. */
  interval: {
    winner: 'B',
    rationale:
      "Workspace B reports a bootstrap 95 % interval for the EC50 (4.1 to 7.9 µM from 2,000 resamples of the wells, in `results.json` as `ec50_ci_uM`), while Workspace A gives none. Both workspaces fit a Hill curve to all 24 wells and report an EC50 near 5.9 µM with a Hill slope of 1.78. Workspace B's report also states how the interval was computed.",
    against_A: [
      'Workspace A reports its EC50 of 5.91 µM in `results.json` without any interval, although its replicate wells differ by up to 9 points of inhibition.',
      "Workspace A's report does not say how well the curve fits the wells: no residuals and no RMSE.",
    ],
    against_B: [],
  },
  /** B wins; praise of B that a cue word ("no") read as something for B to fix. */
  praise: {
    winner: 'B',
    rationale:
      "Workspace B is better. B's fit excludes no wells and is well documented: its Method section lists all 24 wells and the weighting it used. Workspace A drops the three wells at 0.1 µM as outliers without a test, which moves its EC50 from 5.9 to 6.8 µM.",
    against_A: [
      'Workspace A drops the three wells at 0.1 µM without a test for outliers, and its EC50 of 6.8 µM in `results.json` depends on that choice.',
    ],
    against_B: [],
  },
  /** A tie with nothing against either side. */
  tie: {
    winner: 'tie',
    rationale:
      'Neither workspace is better on any of the six points: both write `results.json` with ec50_uM 5.91, hill_slope 1.78 and n_points 24, and both reports have the Summary, Method and Results sections.',
    against_A: [],
    against_B: [],
  },
  /** The toy judge's way of deciding: the sentence that decided it is about the winner. */
  decisive: {
    winner: 'B',
    rationale:
      'Workspace A: 2 of 2 deliverables pass the preflight; 0 validation checks passed and 0 failed in its files. Workspace B: 2 of 2 deliverables pass the preflight; 1 validation checks passed and 0 failed in its files. Workspace B wins, 22 points to 20.',
    against_A: ['Workspace A: 0 validation checks passed in its files, against 1 in Workspace B.'],
    against_B: [],
  },
} as const;
