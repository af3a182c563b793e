# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of pharmacy-population-pk (withheld). Prints the grade as JSON."""

import functools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from genlib import stream  # noqa: E402
from gradelib import Fail, Grader, linear, number_at, report_numbers  # noqa: E402

grader = Grader("pharmacy-population-pk")
truth = world.truth(grader.seed)
ws = grader.workspace
PARAMETERS = ("cl_pop_L_h", "v_pop_L", "ka_per_h", "weight_exponent_cl", "omega_cl", "omega_v")
METRICS = "results/metrics.json"
REPORTED = ["n_blq", "terminal_half_life_h", "predicted_target_attainment_75kg"]


def load_parameters():
    raw = ws.json_object("results/pk_parameters.json")
    values = {key: number_at(raw, key, "results/pk_parameters.json") for key in PARAMETERS}
    if min(values["cl_pop_L_h"], values["v_pop_L"], values["ka_per_h"]) <= 0:
        raise Fail("results/pk_parameters.json: clearance, volume and ka must be positive")
    return values


def load_doses():
    raw = ws.json_object("results/dosing.json")
    doses = {}
    for weight in world.WEIGHTS:
        dose = number_at(raw, str(weight), "results/dosing.json")
        if dose <= 0:
            raise Fail(f"results/dosing.json: dose for {weight} kg must be positive")
        doses[weight] = dose
    return doses


@functools.cache
def best_attainment(weight):
    return max(world.in_window(truth, dose, weight, n=1000, label=1) for dose in world.DOSES)


@functools.cache
def planted_blq_count():
    return sum(row[5] for row in world.study(truth, stream(grader.seed, "study")))


grader.deliverables(0.08)
grader.reproducibility(0.08)


@grader.part("parameter_accuracy", 0.22)
def _():
    p = load_parameters()
    errors = {
        "CL": abs(np.log(p["cl_pop_L_h"] / truth["cl"])),
        "V": abs(np.log(p["v_pop_L"] / truth["v"])),
        "ka": abs(np.log(p["ka_per_h"] / truth["ka"])),
    }
    scores = [linear(error, 0.1, 0.5) for error in errors.values()]
    theta_error = abs(p["weight_exponent_cl"] - truth["theta"])
    scores.append(linear(theta_error, 0.15, 0.6))
    omega_errors = [abs(p["omega_cl"] - truth["omega_cl"]), abs(p["omega_v"] - truth["omega_v"])]
    scores.append(linear(np.mean(omega_errors), 0.05, 0.25))
    reason = ", ".join(f"{k} log error {v:.2f}" for k, v in errors.items()) + f", exponent error {theta_error:.2f}"
    reason += f", omega_cl {p['omega_cl']:.2f} and omega_v {p['omega_v']:.2f} (true {truth['omega_cl']}, {truth['omega_v']})"
    return float(np.mean(scores)), reason


@grader.part("blq_handling", 0.14)
def _():
    metrics = ws.json_object("results/metrics.json")
    counted = number_at(metrics, "n_blq", "results/metrics.json") == planted_blq_count()
    half_life = number_at(metrics, "terminal_half_life_h", "results/metrics.json")
    if half_life <= 0:
        raise Fail("terminal_half_life_h must be positive")
    true_half_life = np.log(2) * truth["v"] / truth["cl"]
    error = abs(np.log(half_life / true_half_life))
    reason = f"n_blq {'matches' if counted else 'differs from'} the data; half-life {half_life:.1f} h vs {true_half_life:.1f} h"
    return 0.3 * counted + 0.7 * linear(error, 0.1, 0.5), reason


@grader.part("dosing_on_virtual_population", 0.3)
def _():
    doses = load_doses()
    scores, notes = [], []
    for weight in world.WEIGHTS:
        agent = world.in_window(truth, doses[weight], weight)
        best = best_attainment(weight)
        scores.append(linear(best - agent, 0.03, 0.3))
        notes.append(f"{weight} kg: {doses[weight]:.0f} mg in window for {100 * agent:.0f} % (best dose {100 * best:.0f} %)")
    return float(np.mean(scores)), "; ".join(notes)


@grader.part("reported_target_attainment", 0.08)
def _():
    doses = load_doses()
    reported = number_at(ws.json_object("results/metrics.json"), "predicted_target_attainment_75kg", "results/metrics.json")
    actual = world.in_window(truth, doses[75], 75)
    return linear(abs(reported - actual), 0.05, 0.3), f"predicted {reported:.2f}, true {actual:.2f} for 75 kg"


@grader.part("results_consistent", 0.05)
def _():
    """results/ablation.json's first variant is `chosen` and holds pk_parameters.json's CL and V and metrics.json's
    half-life, which is ln 2 x V / CL of those parameters; another variant gives the same three numbers."""
    p = load_parameters()
    half_life = number_at(ws.json_object(METRICS), "terminal_half_life_h", METRICS)
    implied = np.log(2) * p["v_pop_L"] / p["cl_pop_L_h"]
    checks = {"terminal_half_life_h = ln 2 x v_pop_L / cl_pop_L_h": abs(half_life / implied - 1) <= 0.01}
    variants = ws.json_object("results/ablation.json", ["variants"])["variants"]
    keys = {"cl_pop_L_h": p["cl_pop_L_h"], "v_pop_L": p["v_pop_L"], "terminal_half_life_h": half_life}
    if not isinstance(variants, list) or len(variants) < 2 or not all(isinstance(v, dict) for v in variants):
        raise Fail("results/ablation.json: variants is not a list of at least two objects")
    chosen = variants[0]
    checks["ablation variant chosen first"] = chosen.get("name") == "chosen"
    checks["ablation chosen = the reported parameters"] = all(
        isinstance(chosen.get(k), (int, float)) and abs(chosen[k] - value) <= 1e-3 * abs(value) for k, value in keys.items()
    )
    checks["every ablation variant gives cl_pop_L_h, v_pop_L, terminal_half_life_h"] = all(
        all(isinstance(v.get(k), (int, float)) and not isinstance(v.get(k), bool) for k in keys) for v in variants
    )
    failed = [name for name, ok in checks.items() if not ok]
    return sum(checks.values()) / len(checks), "consistent" if not failed else "not so: " + "; ".join(failed)


@grader.part("report_numbers", 0.05)
def _():
    return report_numbers(ws, "research_report.md", METRICS, REPORTED)


grader.emit()
