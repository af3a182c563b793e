# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of pharmacy-treatment-effects (withheld). Prints the grade as JSON."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from gradelib import Fail, Grader, linear, number_at, report_numbers  # noqa: E402

grader = Grader("pharmacy-treatment-effects")
ws = grader.workspace
registry = world.patients(grader.seed, "registry")
new = world.patients(grader.seed, "new")
true_ate = float(registry["true_effect"].mean())
outcome, treated = registry["sbp_change_12w"], registry["treated"] == 1
naive = float(outcome[treated].mean() - outcome[~treated].mean())
METRICS = "results/metrics.json"
REPORTED = ["ate", "ate_ci_low", "ate_ci_high", "naive_difference", "selected_modifiers"]
FAMILY_ALPHA = 0.05


def metrics():
    return ws.json_object("results/metrics.json")


def string_list(value, name):
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise Fail(f"{name} is not a list of names")
    return value


def holm_survivors(p_values):
    """The candidates a Holm correction at FAMILY_ALPHA keeps, from {name: p}."""
    kept = set()
    for rank, (name, p) in enumerate(sorted(p_values.items(), key=lambda item: item[1])):
        if p > FAMILY_ALPHA / (len(p_values) - rank):
            break
        kept.add(name)
    return kept


grader.deliverables(0.08)
grader.reproducibility(0.08)


@grader.part("ate_accuracy", 0.18)
def _():
    ate = number_at(metrics(), "ate", "results/metrics.json")
    return linear(abs(ate - true_ate), 0.5, 3.0), f"ATE {ate:.2f} vs planted {true_ate:.2f} mmHg"


@grader.part("ate_interval", 0.03)
def _():
    m = metrics()
    low, high = number_at(m, "ate_ci_low", "metrics"), number_at(m, "ate_ci_high", "metrics")
    if not low <= true_ate <= high:
        return 0.0, f"interval [{low:.2f}, {high:.2f}] misses the planted {true_ate:.2f}"
    width = high - low
    return (1.0 if width <= 3 else 0.5 if width <= 6 else 0.0), f"interval [{low:.2f}, {high:.2f}] covers the truth; width {width:.2f}"


@grader.part("modifier_selection", 0.16)
def _():
    """F1 of the selected modifiers against the planted ones, times the share of selections that survive a Holm
    correction over the fifteen candidates of the team's own interaction p-values (subgroups.csv)."""
    selected = set(string_list(metrics().get("selected_modifiers"), "selected_modifiers"))
    hits = len(selected & world.TRUE_MODIFIERS)
    if not hits:
        return 0.0, f"selected {sorted(selected)}: no true effect modifier"
    precision, recall = hits / len(selected), hits / len(world.TRUE_MODIFIERS)
    table = ws.csv_numeric("results/subgroups.csv", "subgroup", ("interaction_p_value",))
    p_values = {name: table[name][0] for name in world.CANDIDATES if name in table}
    if len(p_values) < len(world.CANDIDATES):
        raise Fail(f"results/subgroups.csv gives interaction_p_value for {len(p_values)} of {len(world.CANDIDATES)} candidates")
    defended = selected & holm_survivors(p_values)
    reason = f"selected {sorted(selected)}; true modifiers found: {hits} of 2; {len(defended)} of {len(selected)} survive Holm at 5 %"
    return 2 * precision * recall / (precision + recall) * len(defended) / len(selected), reason


@grader.part("subgroup_effects", 0.14)
def _():
    """Every candidate's effect in and outside its subgroup against the registry's true effects there."""
    table = ws.csv_numeric("results/subgroups.csv", "subgroup", ("effect_in_subgroup", "effect_outside"))
    errors, notes = [], []
    for name in world.CANDIDATES:
        if name not in table:
            raise Fail(f"results/subgroups.csv has no row for {name}")
        member = registry[name] == 1
        truth_in, truth_out = registry["true_effect"][member].mean(), registry["true_effect"][~member].mean()
        inside, outside = table[name]
        errors += [abs(inside - truth_in), abs(outside - truth_out)]
        if name in world.TRUE_MODIFIERS:
            notes.append(f"{name}: {inside:.1f}/{outside:.1f} vs {truth_in:.1f}/{truth_out:.1f}")
    notes.append(f"mean error over the {len(world.CANDIDATES)} candidates {np.mean(errors):.2f} mmHg")
    return linear(np.mean(errors), 1.0, 3.0), "; ".join(notes)


@grader.part("post_treatment_variable_not_adjusted", 0.1)
def _():
    adjusted = string_list(metrics().get("adjustment_set"), "adjustment_set")
    if world.MEDIATOR in adjusted:
        return 0.0, f"{world.MEDIATOR} (measured after treatment start) is in the adjustment set"
    if not adjusted:
        return 0.0, "no adjustment for confounding"
    return 1.0, f"adjusted for {len(adjusted)} baseline variables, not for {world.MEDIATOR}"


@grader.part("cate_new_patients", 0.13)
def _():
    table = ws.csv_numeric("results/cate_new_patients.csv", "patient_id", ("predicted_effect",))
    missing = [p for p in new["patient_id"] if p not in table]
    if missing:
        raise Fail(f"results/cate_new_patients.csv lacks {len(missing)} patients (e.g. {missing[0]})")
    predicted = np.array([table[p][0] for p in new["patient_id"]])
    pehe = float(np.sqrt(np.mean((predicted - new["true_effect"]) ** 2)))
    spread = float(new["true_effect"].std())
    return linear(pehe, 1.2, spread), f"root mean squared error of individual effects {pehe:.2f} (a constant would score about {spread:.2f})"


@grader.part("naive_difference", 0.03)
def _():
    stated = number_at(metrics(), "naive_difference", METRICS)
    return linear(abs(stated - naive), 0.01, 0.5), f"naive_difference {stated:.2f} vs the registry's {naive:.2f} mmHg"


@grader.part("results_consistent", 0.03)
def _():
    """subgroups.csv's `selected` column marks exactly selected_modifiers; ablation.json's first variant is `chosen`
    with the reported ate, and every variant gives an ate."""
    selected = set(string_list(metrics().get("selected_modifiers"), "selected_modifiers"))
    table = ws.csv_numeric("results/subgroups.csv", "subgroup", ("selected",))
    marked = {name for name, (flag,) in table.items() if flag == 1}
    checks = {"subgroups.csv selected = selected_modifiers": marked == selected}
    ate = number_at(metrics(), "ate", METRICS)
    variants = ws.json_object("results/ablation.json", ["variants"])["variants"]
    if not isinstance(variants, list) or len(variants) < 2 or not all(isinstance(v, dict) for v in variants):
        raise Fail("results/ablation.json: variants is not a list of at least two objects")
    ates = [v.get("ate") for v in variants]
    checks["ablation variant chosen first with the reported ate"] = (
        variants[0].get("name") == "chosen" and isinstance(ates[0], (int, float)) and abs(ates[0] - ate) <= 1e-3
    )
    checks["every ablation variant gives its ate"] = all(
        isinstance(a, (int, float)) and not isinstance(a, bool) and np.isfinite(a) for a in ates
    )
    failed = [name for name, ok in checks.items() if not ok]
    return sum(checks.values()) / len(checks), "consistent" if not failed else "not so: " + "; ".join(failed)


@grader.part("report_numbers", 0.04)
def _():
    return report_numbers(ws, "research_report.md", METRICS, REPORTED)


grader.emit()
