# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""pharmacy-treatment-effects: the planted world (withheld).

An observational registry of a new antihypertensive. Sicker patients (higher severity, older) are more often treated
and also fall more in blood pressure regardless of treatment: the naive treated-versus-untreated difference is
confounded. The true effect is -6 mmHg, 5 mmHg stronger with chronic kidney disease and 4 mmHg weaker from age 75;
ten biomarkers and the other candidates modify nothing. `week4_sbp_change` is measured after treatment starts and
carries part of the effect: adjusting for it biases the estimate towards zero.
"""

import numpy as np

from genlib import stream

N_PATIENTS = 3000
N_NEW = 500
SITES = ["S1", "S2", "S3", "S4", "S5"]
MARKERS = [f"m{i:02d}" for i in range(1, 11)]
CANDIDATES = ["ckd", "diabetes", "female", "age_ge_75", "bmi_ge_30", *MARKERS]
TRUE_MODIFIERS = {"ckd", "age_ge_75"}
MEDIATOR = "week4_sbp_change"


def effect(x):
    """The planted individual treatment effect (mmHg change in systolic blood pressure)."""
    return -6.0 - 5.0 * x["ckd"] + 4.0 * (x["age"] >= 75)


def patients(seed, kind):
    rng = stream(seed, f"patients-{kind}")
    n = N_PATIENTS if kind == "registry" else N_NEW
    x = {"age": rng.integers(40, 89, n), "female": (rng.random(n) < 0.48).astype(int), "severity": rng.standard_normal(n)}
    x["ckd"] = (rng.random(n) < 0.12 + 0.006 * (x["age"] - 40)).astype(int)
    x["diabetes"] = (rng.random(n) < 0.3).astype(int)
    x["bmi"] = np.round(rng.normal(29, 5, n), 1)
    x["site"] = rng.choice(SITES, n)
    x["baseline_sbp"] = np.round(150 + 10 * x["severity"] + rng.normal(0, 5, n), 0)
    for name in MARKERS:
        x[name] = (rng.random(n) < rng.uniform(0.2, 0.5)).astype(int)
    x["age_ge_75"] = (x["age"] >= 75).astype(int)
    x["bmi_ge_30"] = (x["bmi"] >= 30).astype(int)
    x["patient_id"] = np.array([f"{'P' if kind == 'registry' else 'N'}{i + 1:05d}" for i in range(n)])
    x["true_effect"] = effect(x)
    if kind == "registry":
        site_t = {s: v for s, v in zip(SITES, stream(seed, "sites").normal(0, 0.5, len(SITES)))}
        site_y = {s: v for s, v in zip(SITES, stream(seed, "sites-outcome").normal(0, 2.0, len(SITES)))}
        logit = -0.3 + 0.9 * x["severity"] + 0.6 * (x["age"] >= 70) - 0.4 * x["ckd"] + np.array([site_t[s] for s in x["site"]])
        x["treated"] = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
        untreated = -3.0 - 4.0 * x["severity"] + 0.08 * (x["age"] - 60) + 2.0 * x["diabetes"] + np.array([site_y[s] for s in x["site"]])
        early = rng.normal(0, 4, n)
        x[MEDIATOR] = np.round(0.6 * (untreated + x["true_effect"] * x["treated"]) + early, 1)
        x["sbp_change_12w"] = np.round(untreated + x["true_effect"] * x["treated"] + 0.5 * early + rng.normal(0, 6, n), 1)
    return x
