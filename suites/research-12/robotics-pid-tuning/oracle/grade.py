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
from gradelib import Fail, Grader, finite_number, linear, number_at  # noqa: E402

grader = Grader("robotics-pid-tuning")
ws = grader.workspace
truth = world.truth(grader.seed)
spec = importlib.util.spec_from_file_location("original_servo", HERE.parent / "assets" / "sim" / "servo.py")
servo = importlib.util.module_from_spec(spec)
spec.loader.exec_module(servo)


def load_controller():
    raw = ws.json_object("results/controller.json", ["kp", "ki", "kd", "derivative_filter_s", "anti_windup"])
    controller = {key: finite_number(raw[key], f"results/controller.json {key}") for key in ("kp", "ki", "kd", "derivative_filter_s")}
    if min(controller.values()) < 0:
        raise Fail("results/controller.json: gains and filter constant must be non-negative")
    if not isinstance(raw["anti_windup"], bool):
        raise Fail("results/controller.json: anti_windup must be true or false")
    controller["anti_windup"] = raw["anti_windup"]
    return controller


FRESH_SCENARIOS = world.scenarios(truth, stream(grader.seed, "fresh"), 120, "f")


def fresh_report():
    if "fresh" not in grader.cache:
        with np.errstate(all="ignore"):
            grader.cache["fresh"] = servo.evaluate(load_controller(), FRESH_SCENARIOS)
    return grader.cache["fresh"]


grader.deliverables(0.15)
grader.protected_assets(0.0, cap=20)


@grader.part("fresh_scenarios_pass_rate", 0.4)
def _():
    rate = fresh_report()["pass_rate"]
    return linear(rate, 0.95, 0.5), f"{100 * rate:.0f} % of 120 fresh scenarios meet the specification in the original simulator"


@grader.part("worst_case_overshoot", 0.2)
def _():
    worst = max(row["overshoot_pct"] for row in fresh_report()["scenarios"])
    return linear(worst, 10.0, 30.0), f"worst overshoot {worst:.1f} % on fresh scenarios (specification 10 %)"


@grader.part("reported_pass_rate_replayed", 0.25)
def _():
    reported = number_at(ws.json_object("results/metrics.json"), "pass_rate", "results/metrics.json")
    scenarios = world.scenarios(truth, stream(grader.seed, "scenarios"), world.N_SCENARIOS, "s")
    with np.errstate(all="ignore"):
        replayed = servo.evaluate(load_controller(), scenarios)["pass_rate"]
    return linear(abs(reported - replayed), 0.025, 0.2), f"reported pass rate {reported:.3f}, replayed {replayed:.3f} in the original simulator"


grader.emit()
