# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of pharmacy-dose-response (withheld). Prints the grade as JSON."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from gradelib import Fail, Grader, finite_number, interval_calibration, linear, report_numbers  # noqa: E402

grader = Grader("pharmacy-dose-response")
truth = world.truth(grader.seed)
ws = grader.workspace
COLUMNS = ("log10_ec50", "log10_ec50_ci_low", "log10_ec50_ci_high", "hill", "emax")
MISSING_ERROR = 2.0  # a compound without an estimate counts as two log units off
METRICS = "results/metrics.json"
METRIC_KEYS = ["most_potent", "potency_order", "solubility_limited_compounds", "median_ci_width_log10"]
EXCLUDED = "results/excluded_wells.csv"
NORMALISED = "results/normalised.csv"
FALSE_EXCLUSIONS_FREE = 2  # wells a careful analysis may drop as noise outliers without cost
FALSE_EXCLUSIONS_WORST = 10
INSOLUBLE = {world.COMPOUNDS[i] for i in truth["insoluble"]}
FAILED = {(plate, well) for plate, well, _ in world.failed_dispenses(truth)}


def load_potency():
    table = ws.csv_numeric("results/potency.csv", "compound", COLUMNS)
    return {name: dict(zip(COLUMNS, values)) for name, values in table.items() if name in world.COMPOUNDS}


def ec50_errors(rows, indices):
    return [
        abs(rows[world.COMPOUNDS[i]]["log10_ec50"] - truth["log_ec50"][i]) if world.COMPOUNDS[i] in rows else MISSING_ERROR
        for i in indices
    ]


def above_solubility_wells():
    """(plate, well) of every compound well whose nominal concentration exceeds the compound's solubility."""
    wells = set()
    for plate in range(world.N_PLATES):
        for position, (what, log_c) in enumerate(world.plate_layout(plate)):
            if not isinstance(what, str) and log_c > truth["solubility_log"][what]:
                wells.add((f"P{plate + 1}", position + 1))
    return wells


JUSTIFIED = FAILED | above_solubility_wells()


def expected_inhibition():
    """{(plate, well): true % inhibition} of the compound wells below solubility that received their compound."""
    expected = {}
    for plate in range(world.N_PLATES):
        for position, (what, log_c) in enumerate(world.plate_layout(plate)):
            key = (f"P{plate + 1}", position + 1)
            if isinstance(what, str) or key in JUSTIFIED or world.reads_as_vehicle(truth, plate, position, what, log_c):
                continue
            expected[key] = float(world.inhibition(truth, what, log_c))
    return expected


EXPECTED = expected_inhibition()


def well_rows(rel, columns=()):
    """[((plate, well), row)] of a CSV with `plate` and `well` columns (well numbers as in data/assay.csv)."""
    keyed = []
    for index, row in enumerate(ws.csv_rows(rel, ["plate", "well", *columns])):
        try:
            number = float(row["well"])
        except ValueError:
            number = float("nan")
        if not number.is_integer():
            raise Fail(f"{rel} row {index + 2}: well {row['well'][:20]!r} is not a well number")
        keyed.append(((row["plate"].upper(), int(number)), row))
    return keyed


def excluded_wells():
    return {key for key, _ in well_rows(EXCLUDED)}


def compound_list(value, where):
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise Fail(f"{where} is not a list of compound ids")
    return [item.strip() for item in value]


grader.deliverables(0.08)
grader.reproducibility(0.08)


@grader.part("ec50_accuracy", 0.18)
def _():
    errors = ec50_errors(load_potency(), range(len(world.COMPOUNDS)))
    return linear(np.mean(errors), 0.05, 0.3), f"mean |log10 EC50 error| {np.mean(errors):.3f} over {len(errors)} compounds"


@grader.part("emax_accuracy", 0.08)
def _():
    rows = load_potency()
    errors = [abs(rows[c]["emax"] - truth["emax"][i]) if c in rows else 100.0 for i, c in enumerate(world.COMPOUNDS)]
    return linear(np.mean(errors), 3.0, 15.0), f"mean |Emax error| {np.mean(errors):.1f} percentage points"


@grader.part("precipitation_handled", 0.12)
def _():
    """The poorly soluble compounds' EC50 (0.7) and naming them in metrics.json (0.3)."""
    errors = ec50_errors(load_potency(), truth["insoluble"])
    names = ", ".join(sorted(INSOLUBLE))
    accuracy = linear(np.mean(errors), 0.1, 0.4)
    reason = f"mean |log10 EC50 error| {np.mean(errors):.3f} for the poorly soluble {names}"
    try:
        metrics = ws.json_object(METRICS, ["solubility_limited_compounds"])
        named = set(compound_list(metrics["solubility_limited_compounds"], f"{METRICS} solubility_limited_compounds"))
        agreement = len(named & INSOLUBLE) / len(named | INSOLUBLE)
        reason += f"; solubility_limited_compounds {sorted(named)} (agreement {agreement:.2f})"
    except Fail as failure:
        agreement = 0.0
        reason += f"; {failure}"
    return 0.7 * accuracy + 0.3 * agreement, reason


@grader.part("per_plate_normalisation", 0.12)
def _():
    """results/normalised.csv against the true inhibition of every well: each plate's mean error (its bias) is what
    pooling the plates' controls leaves (the plates' signal windows differ), while the wells' noise (about 4 points)
    averages out over a plate. Scored on the root mean square of the plates' biases, times the share of wells given."""
    stated = {}
    for key, row in well_rows(NORMALISED, ["inhibition"]):
        try:
            stated[key] = float(row["inhibition"])
        except ValueError:
            continue
    errors = {}
    for (plate, well), value in EXPECTED.items():
        if np.isfinite(stated.get((plate, well), float("nan"))):
            errors.setdefault(plate, []).append(stated[(plate, well)] - value)
    given = sum(len(values) for values in errors.values())
    if not given:
        raise Fail(f"{NORMALISED} gives no finite inhibition for any compound well")
    biases = {plate: float(np.mean(values)) for plate, values in sorted(errors.items())}
    rms = float(np.sqrt(np.mean([bias**2 for bias in biases.values()])))
    shown = ", ".join(f"{plate} {bias:+.1f}" for plate, bias in biases.items())
    reason = f"mean inhibition error per plate {shown} (rms {rms:.1f} points); {given} of {len(EXPECTED)} wells given"
    return linear(rms, 2.0, 5.0) * given / len(EXPECTED), reason


@grader.part("failed_dispenses_excluded", 0.12)
def _():
    """Share of the findable failed dispenses excluded, times a penalty for wells excluded without cause."""
    excluded = excluded_wells()
    unjustified = len(excluded - JUSTIFIED)
    precision = linear(unjustified, FALSE_EXCLUSIONS_FREE, FALSE_EXCLUSIONS_WORST)
    reason = f"{unjustified} well(s) excluded that are neither above solubility nor failed dispenses"
    if not FAILED:
        return precision, f"no findable failed dispense at this seed; {reason}"
    found = len(FAILED & excluded)
    return found / len(FAILED) * precision, f"{found} of {len(FAILED)} failed dispenses excluded; {reason}"


@grader.part("ci_calibration", 0.1)
def _():
    rows = load_potency()
    lows = [rows[c]["log10_ec50_ci_low"] if c in rows else None for c in world.COMPOUNDS]
    highs = [rows[c]["log10_ec50_ci_high"] if c in rows else None for c in world.COMPOUNDS]
    return interval_calibration(truth["log_ec50"], lows, highs, 0.95, width_best=0.4, width_worst=1.0)


@grader.part("potency_ranking", 0.04)
def _():
    rows = load_potency()
    if len(rows) < len(world.COMPOUNDS):
        raise Fail("not every compound has an estimate")
    estimated = np.argsort(np.argsort([rows[c]["log10_ec50"] for c in world.COMPOUNDS]))
    planted = np.argsort(np.argsort(truth["log_ec50"]))
    rho = float(np.corrcoef(estimated, planted)[0, 1])
    return max(0.0, rho), f"Spearman rank correlation of potency {rho:.2f}"


def ablation_matches(rows):
    """results/ablation.json's first variant is `chosen` and holds potency.csv's log10_ec50; another variant has
    every compound's log10_ec50."""
    try:
        variants = ws.json_object("results/ablation.json", ["variants"])["variants"]
    except Fail:
        return False
    if not isinstance(variants, list) or len(variants) < 2 or not all(isinstance(v, dict) for v in variants):
        return False
    estimates = [v.get("log10_ec50") for v in variants]
    if variants[0].get("name") != "chosen" or not all(isinstance(e, dict) for e in estimates):
        return False
    for compound in world.COMPOUNDS:
        values = [e.get(compound) for e in estimates]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and np.isfinite(v) for v in values):
            return False
        if abs(values[0] - rows[compound]["log10_ec50"]) > 1e-3:
            return False
    return True


@grader.part("results_consistent", 0.04)
def _():
    """metrics.json's ranking and median width, and ablation.json's chosen variant, agree with potency.csv."""
    rows = load_potency()
    if len(rows) < len(world.COMPOUNDS):
        raise Fail("results/potency.csv does not have every compound")
    order = sorted(world.COMPOUNDS, key=lambda c: rows[c]["log10_ec50"])
    median_width = float(np.median([rows[c]["log10_ec50_ci_high"] - rows[c]["log10_ec50_ci_low"] for c in order]))
    checks = {"potency_order": False, "most_potent": False, "median_ci_width_log10": False}
    problems = []
    try:
        metrics = ws.json_object(METRICS, METRIC_KEYS)
        checks["potency_order"] = compound_list(metrics["potency_order"], f"{METRICS} potency_order") == order
        checks["most_potent"] = metrics["most_potent"] == order[0]
        width = finite_number(metrics["median_ci_width_log10"], f"{METRICS} median_ci_width_log10")
        checks["median_ci_width_log10"] = abs(width - median_width) <= 0.005
    except Fail as failure:
        problems.append(str(failure))
    checks["results/ablation.json variant chosen"] = ablation_matches(rows)
    problems += [name for name, ok in checks.items() if not ok]
    score = sum(checks.values()) / len(checks)
    return score, "agree with results/potency.csv" if not problems else "not as potency.csv: " + "; ".join(problems)


@grader.part("report_numbers", 0.04)
def _():
    return report_numbers(ws, "research_report.md", METRICS, METRIC_KEYS)


grader.emit()
