"""Reference solution for pharmacy-treatment-effects: `python3 run.py` (careful), `--careless` (every trap) or
`--trap <name>`: post-treatment-adjusted (the week-4 change, measured after treatment started, is in the adjustment
set), naive-subgroups (each candidate judged by the raw treated-minus-untreated difference inside and outside its
subgroup, confounded, and claimed at p < 0.05 without a multiplicity correction)."""

import numpy as np
import pandas as pd
from scipy import stats

import refkit

TRAPS = refkit.fallen_traps({"post-treatment-adjusted", "naive-subgroups"})
MARKERS = [f"m{i:02d}" for i in range(1, 11)]
CANDIDATES = ["ckd", "diabetes", "female", "age_ge_75", "bmi_ge_30", *MARKERS]
BASE = ["age", "female", "bmi", "ckd", "diabetes", "severity", "baseline_sbp", *MARKERS]


def prepare(d):
    d = d.copy()
    d["age_ge_75"] = (d.age >= 75).astype(int)
    d["bmi_ge_30"] = (d.bmi >= 30).astype(int)
    for s in sorted(d.site.unique())[1:]:
        d[f"site_{s}"] = (d.site == s).astype(int)
    return d


def ols(d, y, columns):
    X = np.column_stack([np.ones(len(d)), d[columns].to_numpy(float)])
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ beta
    sigma2 = resid @ resid / (len(y) - X.shape[1])
    cov = sigma2 * np.linalg.inv(X.T @ X)
    return dict(zip(["const", *columns], beta)), {k: cov[i, j] for i, k in enumerate(["const", *columns]) for j, l in enumerate(["const", *columns]) if k == l}, cov


def main():
    refkit.prepare()
    d = prepare(pd.read_csv("data/registry.csv"))
    new = prepare(pd.read_csv("data/new_patients.csv"))
    sites = [c for c in d.columns if c.startswith("site_")]
    y = d.sbp_change_12w.to_numpy()
    naive = float(y[d.treated == 1].mean() - y[d.treated == 0].mean())
    confounders = BASE + ["age_ge_75"] + sites
    adjustment = confounders + (["week4_sbp_change"] if "post-treatment-adjusted" in TRAPS else [])

    rows, p_values = [], {}
    for c in CANDIDATES:
        if "naive-subgroups" in TRAPS:
            inside = d[d[c] == 1]
            outside = d[d[c] == 0]
            e_in = inside.sbp_change_12w[inside.treated == 1].mean() - inside.sbp_change_12w[inside.treated == 0].mean()
            e_out = outside.sbp_change_12w[outside.treated == 1].mean() - outside.sbp_change_12w[outside.treated == 0].mean()
            se = np.sqrt(inside.sbp_change_12w.var() * (1 / max(1, (inside.treated == 1).sum()) + 1 / max(1, (inside.treated == 0).sum())) * 2)
            p = float(2 * stats.norm.sf(abs(e_in - e_out) / se))
        else:
            dd = d.assign(treated_x=d.treated * d[c])
            beta, var, _ = ols(dd, y, ["treated", "treated_x", *adjustment])
            p = float(2 * stats.norm.sf(abs(beta["treated_x"]) / np.sqrt(var["treated_x"])))
            e_out, e_in = beta["treated"], beta["treated"] + beta["treated_x"]
        p_values[c] = p
        rows.append([c, float(e_in), float(e_out), p])
    threshold = 0.05 if "naive-subgroups" in TRAPS else 0.05 / len(CANDIDATES)
    selected = [c for c in CANDIDATES if p_values[c] < threshold]

    design = d.copy()
    for c in selected:
        design[f"t_{c}"] = design.treated * design[c]
    columns = ["treated", *[f"t_{c}" for c in selected], *adjustment]
    beta, _, cov = ols(design, y, columns)
    names = ["const", *columns]
    contrast = np.zeros(len(names))
    contrast[names.index("treated")] = 1
    for c in selected:
        contrast[names.index(f"t_{c}")] = d[c].mean()
    ate = float(beta["treated"] + sum(beta[f"t_{c}"] * d[c].mean() for c in selected))
    se = float(np.sqrt(contrast @ cov @ contrast))
    if "naive-subgroups" not in TRAPS:
        # Subgroup effects from the final model: the average individual effect of the members of each subgroup.
        individual = beta["treated"] + sum(beta[f"t_{c}"] * d[c].to_numpy() for c in selected)
        rows = [[c, float(individual[d[c] == 1].mean()), float(individual[d[c] == 0].mean()), r[3]] for c, r in zip(CANDIDATES, rows)]
    cate = beta["treated"] + sum(beta[f"t_{c}"] * new[c].to_numpy() for c in selected)

    pd.DataFrame(rows, columns=["subgroup", "effect_in_subgroup", "effect_outside", "interaction_p_value"]).assign(
        selected=lambda t: t.subgroup.isin(selected).astype(int)).to_csv("results/subgroups.csv", index=False, float_format="%.4f")
    pd.DataFrame({"patient_id": new.patient_id, "predicted_effect": cate}).to_csv("results/cate_new_patients.csv", index=False, float_format="%.3f")
    refkit.save_json("metrics.json", {"ate": ate, "ate_ci_low": ate - 1.96 * se, "ate_ci_high": ate + 1.96 * se,
                                      "naive_difference": naive, "adjustment_set": adjustment, "selected_modifiers": selected})
    unadjusted_for_week4 = ols(d, y, ["treated", *confounders, "week4_sbp_change"])[0]["treated"]
    refkit.save_json("ablation.json", {"variants": [
        {"name": "chosen", "description": "outcome regression with the selected interactions", "ate": ate},
        {"name": "naive_difference", "description": "treated minus untreated, no adjustment", "ate": naive},
        {"name": "adjusted_no_interactions", "description": "the same confounders, no interactions",
         "ate": float(ols(d, y, ["treated", *confounders])[0]["treated"])},
        {"name": "adjusted_including_week4", "description": "also adjusted for the week-4 change (post-treatment)",
         "ate": float(unadjusted_for_week4)},
    ]})
    fig, ax = refkit.figure("Treatment effect by subgroup", "effect (mmHg)", "")
    ax.errorbar([r[1] for r in rows], range(len(rows)), fmt="o", label="in subgroup")
    ax.plot([r[2] for r in rows], range(len(rows)), "x", label="outside")
    ax.set_yticks(range(len(rows)), [r[0] for r in rows])
    ax.axvline(ate, color="k", ls="--")
    ax.legend()
    refkit.save_plot(fig, "subgroup_forest.png")
    fig, ax = refkit.figure("Covariate balance: severity by treatment", "severity", "patients")
    ax.hist([d.severity[d.treated == 1], d.severity[d.treated == 0]], bins=30, label=["treated", "untreated"])
    ax.legend()
    refkit.save_plot(fig, "balance.png")
    refkit.write_report("Effect of the new antihypertensive in a registry", [
        ("Summary", f"Adjusted average treatment effect {ate:.2f} mmHg (95 % CI {ate - 1.96 * se:.2f} to {ate + 1.96 * se:.2f}), against a naive difference of {naive:.2f} mmHg. Effect modifiers surviving multiplicity correction: {', '.join(selected) or 'none'}."),
        ("Data", f"{len(d)} patients, {int(d.treated.sum())} treated, not randomised: treated patients are more severe and older (see deliverables/plots/balance.png), and severity itself predicts a larger fall in blood pressure, so the naive difference is confounded. The week-4 blood pressure change is measured after treatment starts and lies on the causal path; it is not adjusted for."),
        ("Method", f"Linear outcome regression on baseline confounders (age, sex, BMI, kidney disease, diabetes, severity, baseline SBP, biomarkers, site). Each of {len(CANDIDATES)} candidate modifiers is tested with a treatment interaction adjusted for the same confounders; significance requires p < 0.05/{len(CANDIDATES)} (Bonferroni). The final model includes the selected interactions; subgroup effects are the average model-based individual effect of the subgroup's members; the average effect is the sample average of the model's individual effects, with a delta-method interval; individual effects for new patients come from the same model."),
        ("Results", refkit.table([[r[0], f"{r[1]:.2f}", f"{r[2]:.2f}", f"{r[3]:.3g}"] for r in rows], ["subgroup", "effect in", "effect outside", "interaction p"])),
        ("Limitations", "No unmeasured confounding is assumed; the linear outcome model could be misspecified; subgroup effects are estimated from the same data that selected them. Reproduce with python3 run.py."),
    ])


if __name__ == "__main__":
    main()
