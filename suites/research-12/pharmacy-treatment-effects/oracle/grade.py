# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of pharmacy-treatment-effects (withheld). Prints the grade as JSON."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from gradelib import Fail, Grader, linear, number_at  # noqa: E402

grader = Grader("pharmacy-treatment-effects")
ws = grader.workspace
registry = world.patients(grader.seed, "registry")
new = world.patients(grader.seed, "new")
true_ate = float(registry["true_effect"].mean())


def metrics():
    return ws.json_object("results/metrics.json")


def string_list(value, name):
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise Fail(f"{name} is not a list of names")
    return value


grader.deliverables(0.1)


@grader.part("ate_accuracy", 0.25)
def _():
    ate = number_at(metrics(), "ate", "results/metrics.json")
    return linear(abs(ate - true_ate), 0.5, 3.0), f"ATE {ate:.2f} vs planted {true_ate:.2f} mmHg"


@grader.part("ate_interval", 0.05)
def _():
    m = metrics()
    low, high = number_at(m, "ate_ci_low", "metrics"), number_at(m, "ate_ci_high", "metrics")
    if not low <= true_ate <= high:
        return 0.0, f"interval [{low:.2f}, {high:.2f}] misses the planted {true_ate:.2f}"
    width = high - low
    return (1.0 if width <= 3 else 0.5 if width <= 6 else 0.0), f"interval [{low:.2f}, {high:.2f}] covers the truth; width {width:.2f}"


@grader.part("modifier_selection", 0.2)
def _():
    selected = set(string_list(metrics().get("selected_modifiers"), "selected_modifiers"))
    hits = len(selected & world.TRUE_MODIFIERS)
    if not hits:
        return 0.0, f"selected {sorted(selected)}: no true effect modifier"
    precision, recall = hits / len(selected), hits / len(world.TRUE_MODIFIERS)
    return 2 * precision * recall / (precision + recall), f"selected {sorted(selected)}; true modifiers found: {hits} of 2"


@grader.part("subgroup_effects", 0.1)
def _():
    table = ws.csv_numeric("results/subgroups.csv", "subgroup", ("effect_in_subgroup", "effect_outside"))
    errors, notes = [], []
    for name in sorted(world.TRUE_MODIFIERS):
        if name not in table:
            raise Fail(f"results/subgroups.csv has no row for {name}")
        member = registry[name] == 1
        truth_in, truth_out = registry["true_effect"][member].mean(), registry["true_effect"][~member].mean()
        inside, outside = table[name]
        errors += [abs(inside - truth_in), abs(outside - truth_out)]
        notes.append(f"{name}: {inside:.1f}/{outside:.1f} vs {truth_in:.1f}/{truth_out:.1f}")
    return linear(np.mean(errors), 1.0, 4.0), "; ".join(notes)


@grader.part("post_treatment_variable_not_adjusted", 0.1)
def _():
    adjusted = string_list(metrics().get("adjustment_set"), "adjustment_set")
    if world.MEDIATOR in adjusted:
        return 0.0, f"{world.MEDIATOR} (measured after treatment start) is in the adjustment set"
    if not adjusted:
        return 0.0, "no adjustment for confounding"
    return 1.0, f"adjusted for {len(adjusted)} baseline variables, not for {world.MEDIATOR}"


@grader.part("cate_new_patients", 0.2)
def _():
    table = ws.csv_numeric("results/cate_new_patients.csv", "patient_id", ("predicted_effect",))
    missing = [p for p in new["patient_id"] if p not in table]
    if missing:
        raise Fail(f"results/cate_new_patients.csv lacks {len(missing)} patients (e.g. {missing[0]})")
    predicted = np.array([table[p][0] for p in new["patient_id"]])
    pehe = float(np.sqrt(np.mean((predicted - new["true_effect"]) ** 2)))
    spread = float(new["true_effect"].std())
    return linear(pehe, 1.2, spread), f"root mean squared error of individual effects {pehe:.2f} (a constant would score about {spread:.2f})"


grader.emit()
