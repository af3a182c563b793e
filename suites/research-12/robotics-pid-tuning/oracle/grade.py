# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of robotics-pid-tuning (withheld). Prints the grade as JSON.

The controller is always evaluated in the task's own copy of the simulator, never the workspace's.
"""

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from genlib import stream  # noqa: E402
from gradelib import Fail, Grader, finite_number, linear, number_at, report_numbers  # noqa: E402

grader = Grader("robotics-pid-tuning")
ws = grader.workspace
truth = world.truth(grader.seed)
spec = importlib.util.spec_from_file_location("original_servo", HERE.parent / "assets" / "sim" / "servo.py")
servo = importlib.util.module_from_spec(spec)
spec.loader.exec_module(servo)


def parse_controller(raw, where):
    if not isinstance(raw, dict):
        raise Fail(f"{where} is not a JSON object")
    missing = [key for key in ("kp", "ki", "kd", "derivative_filter_s", "anti_windup") if key not in raw]
    if missing:
        raise Fail(f"{where} lacks {', '.join(missing)}")
    controller = {key: finite_number(raw[key], f"{where} {key}") for key in ("kp", "ki", "kd", "derivative_filter_s")}
    if min(controller.values()) < 0:
        raise Fail(f"{where}: gains and filter constant must be non-negative")
    if not isinstance(raw["anti_windup"], bool):
        raise Fail(f"{where}: anti_windup must be true or false")
    controller["anti_windup"] = raw["anti_windup"]
    return controller


def load_controller():
    return parse_controller(ws.json("results/controller.json"), "results/controller.json")


FRESH_SCENARIOS = world.scenarios(truth, stream(grader.seed, "fresh"), 120, "f")


def fresh_report():
    if "fresh" not in grader.cache:
        with np.errstate(all="ignore"):
            grader.cache["fresh"] = servo.evaluate(load_controller(), FRESH_SCENARIOS)
    return grader.cache["fresh"]


EVALUATION_SCENARIOS = world.scenarios(truth, stream(grader.seed, "scenarios"), world.N_SCENARIOS, "s")


def replay(controller):
    """The controller's report on the 40 evaluation scenarios of data/scenarios.json, in the original simulator."""
    with np.errstate(all="ignore"):
        return servo.evaluate(controller, EVALUATION_SCENARIOS)


def evaluation_report():
    if "evaluation" not in grader.cache:
        grader.cache["evaluation"] = replay(load_controller())
    return grader.cache["evaluation"]


grader.deliverables(0.1)
grader.protected_assets(0.0, cap=20)
grader.reproducibility(0.1, ["results/controller.json", "results/metrics.json", "results/ablation.json"])


@grader.part("fresh_scenarios_pass_rate", 0.35)
def _():
    rate = fresh_report()["pass_rate"]
    return linear(rate, 0.95, 0.5), f"{100 * rate:.0f} % of 120 fresh scenarios meet the specification in the original simulator"


@grader.part("worst_case_overshoot", 0.15)
def _():
    worst = max(row["overshoot_pct"] for row in fresh_report()["scenarios"])
    return linear(worst, 10.0, 30.0), f"worst overshoot {worst:.1f} % on fresh scenarios (specification 10 %)"


@grader.part("reported_metrics_replayed", 0.15)
def _():
    metrics = ws.json_object("results/metrics.json")
    rows = evaluation_report()["scenarios"]
    replayed = {
        "pass_rate": evaluation_report()["pass_rate"],
        "worst_overshoot_pct": max(row["overshoot_pct"] for row in rows),
        "worst_settling_time_s": max(row["settling_time_s"] for row in rows),
        "mean_itae": float(np.mean([row["itae"] for row in rows])),
    }
    reported = {key: number_at(metrics, key, "results/metrics.json") for key in replayed}
    pass_score = linear(abs(reported["pass_rate"] - replayed["pass_rate"]), 0.025, 0.2)
    others = [
        linear(abs(reported[key] - value) / max(abs(value), 1e-6), 0.02, 0.2)
        for key, value in replayed.items()
        if key != "pass_rate"
    ]
    details = ", ".join(f"{key} {reported[key]:.4g} vs {value:.4g}" for key, value in replayed.items())
    return 0.5 * pass_score + 0.5 * float(np.mean(others)), f"reported vs replayed in the original simulator: {details}"


@grader.part("ablation_replayed", 0.1)
def _():
    ablation = ws.json_object("results/ablation.json")
    matches, checked = [], []
    for name, entry in ablation.items():
        where = f"results/ablation.json {name}"
        if not isinstance(entry, dict) or "controller" not in entry:
            continue
        controller = parse_controller(entry["controller"], f"{where}.controller")
        reported = number_at(entry, "pass_rate", where)
        checked.append(name)
        matches.append(abs(reported - replay(controller)["pass_rate"]) <= 0.025)
    if len(checked) < 2:
        raise Fail(f"results/ablation.json has {len(checked)} variant(s) with a controller and a pass_rate (need 2)")
    return sum(matches) / len(checked), f"{sum(matches)} of {len(checked)} ablation variants' pass rates replayed"


@grader.part("report_numbers", 0.05)
def _():
    return report_numbers(ws, "research_report.md", "results/metrics.json", ["pass_rate", "worst_overshoot_pct"])


grader.emit()
