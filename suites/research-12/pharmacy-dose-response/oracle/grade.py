# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of pharmacy-dose-response (withheld). Prints the grade as JSON."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from gradelib import Fail, Grader, linear  # noqa: E402

grader = Grader("pharmacy-dose-response")
truth = world.truth(grader.seed)
ws = grader.workspace
COLUMNS = ("log10_ec50", "log10_ec50_ci_low", "log10_ec50_ci_high", "hill", "emax")
MISSING_ERROR = 2.0  # a compound without an estimate counts as two log units off


def load_potency():
    table = ws.csv_numeric("results/potency.csv", "compound", COLUMNS)
    return {name: dict(zip(COLUMNS, values)) for name, values in table.items() if name in world.COMPOUNDS}


def ec50_errors(rows, indices):
    return [
        abs(rows[world.COMPOUNDS[i]]["log10_ec50"] - truth["log_ec50"][i]) if world.COMPOUNDS[i] in rows else MISSING_ERROR
        for i in indices
    ]


grader.deliverables(0.15)


@grader.part("ec50_accuracy", 0.3)
def _():
    errors = ec50_errors(load_potency(), range(len(world.COMPOUNDS)))
    return linear(np.mean(errors), 0.05, 0.3), f"mean |log10 EC50 error| {np.mean(errors):.3f} over {len(errors)} compounds"


@grader.part("emax_accuracy", 0.15)
def _():
    rows = load_potency()
    errors = [abs(rows[c]["emax"] - truth["emax"][i]) if c in rows else 100.0 for i, c in enumerate(world.COMPOUNDS)]
    return linear(np.mean(errors), 3.0, 15.0), f"mean |Emax error| {np.mean(errors):.1f} percentage points"


@grader.part("precipitation_handled", 0.15)
def _():
    errors = ec50_errors(load_potency(), truth["insoluble"])
    names = ", ".join(world.COMPOUNDS[i] for i in truth["insoluble"])
    return linear(np.mean(errors), 0.1, 0.4), f"mean |log10 EC50 error| {np.mean(errors):.3f} for the poorly soluble {names}"


@grader.part("ci_calibration", 0.15)
def _():
    rows = load_potency()
    covered, widths = 0, []
    for i, name in enumerate(world.COMPOUNDS):
        if name not in rows:
            widths.append(10.0)
            continue
        low, high = rows[name]["log10_ec50_ci_low"], rows[name]["log10_ec50_ci_high"]
        if high < low:
            raise Fail(f"results/potency.csv: {name} has ci_high < ci_low")
        covered += low <= truth["log_ec50"][i] <= high
        widths.append(high - low)
    coverage = covered / len(world.COMPOUNDS)
    score = min(1.0, coverage / 0.75) * linear(np.mean(widths), 0.4, 1.0)
    return score, f"95 % intervals cover the truth for {covered} of {len(world.COMPOUNDS)}; mean width {np.mean(widths):.2f} log units"


@grader.part("potency_ranking", 0.1)
def _():
    rows = load_potency()
    if len(rows) < len(world.COMPOUNDS):
        raise Fail("not every compound has an estimate")
    estimated = np.argsort(np.argsort([rows[c]["log10_ec50"] for c in world.COMPOUNDS]))
    planted = np.argsort(np.argsort(truth["log_ec50"]))
    rho = float(np.corrcoef(estimated, planted)[0, 1])
    return max(0.0, rho), f"Spearman rank correlation of potency {rho:.2f}"


grader.emit()
