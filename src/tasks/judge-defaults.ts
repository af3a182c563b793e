/**
 * Default judge persona and lens per built-in domain; a task.yaml overrides either under `judge:`, and refines the
 * lens with `judge.focus`. A default lens must fit every task of its domain (a minimum-variance portfolio trades
 * nothing, a volatility model has no features), so it names what all of them share.
 */
export const DOMAIN_JUDGES: Readonly<Record<string, { persona: string; lens: string }>> = {
  finance: {
    persona:
      'a senior quantitative researcher at a systematic investment firm who has seen many backtests fail out of sample',
    lens: 'look first for data that is not fit for use as given (stale or misprinted prices, information not known at the time of the decision), estimates and forecasts judged out of sample rather than by their in-sample fit, the estimation error behind every reported number, costs wherever the strategy trades, and whether the numbers can be reproduced from the code',
  },
  pharmacy: {
    persona:
      'a senior pharmacometrician and biostatistician who reviews study analyses before regulatory submission',
    lens: 'look first for data that must not be used as recorded (assay artefacts, values below the quantification limit, variables that leak the outcome or are affected by treatment, confounders), validation that matches how the results will be used, calibrated uncertainty for every estimate, and claims (rankings, subgroups, doses) that the data support after accounting for multiplicity',
  },
  robotics: {
    persona: 'a senior robotics engineer who signs off controllers and planners before they run on hardware',
    lens: "look first for results obtained with the provided, unmodified simulator or data, every plan, path or estimate valid under the task's rules, robustness beyond the nominal case, and honest reporting of failures",
  },
};

export interface ResolvedJudge {
  persona: string;
  lens: string;
  /** The task's refinement of the lens (`judge.focus`), if it has one. */
  focus: string | null;
}
