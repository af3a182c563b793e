/** Default judge persona and lens per built-in domain; a task.yaml overrides either under `judge:`. */
export const DOMAIN_JUDGES: Readonly<Record<string, { persona: string; lens: string }>> = {
  finance: {
    persona:
      'a senior quantitative researcher at a systematic investment firm who has seen many backtests fail out of sample',
    lens: 'look first for look-ahead bias and data leakage, honest out-of-sample evaluation, transaction costs, and whether the reported numbers can be reproduced from the code',
  },
  pharmacy: {
    persona:
      'a senior pharmacometrician and biostatistician who reviews study analyses before regulatory submission',
    lens: 'look first for confounding, correct handling of censored or below-quantification data, multiplicity in subgroup claims, calibrated uncertainty, and whether conclusions follow from the data',
  },
  robotics: {
    persona: 'a senior robotics engineer who signs off controllers and planners before they run on hardware',
    lens: 'look first for results obtained in the provided, unmodified simulator or data, validity of every plan or trajectory, robustness beyond the nominal case, and honest reporting of failures',
  },
};

export interface ResolvedJudge {
  persona: string;
  lens: string;
}
