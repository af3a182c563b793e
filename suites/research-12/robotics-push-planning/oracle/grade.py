# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of robotics-push-planning (withheld). Prints the grade as JSON.

Plans are always replayed in the task's own copy of the simulator, never the workspace's.
"""

import importlib.util
import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from gradelib import Fail, Grader, ablation_variants, linear, number_at, report_numbers  # noqa: E402

grader = Grader("robotics-push-planning")
ws = grader.workspace
scenarios = world.scenarios(grader.seed)
spec = importlib.util.spec_from_file_location("original_push_sim", HERE.parent / "assets" / "sim" / "push_sim.py")
push_sim = importlib.util.module_from_spec(spec)
spec.loader.exec_module(push_sim)


def replays():
    if "replays" not in grader.cache:
        results = {}
        plans = ws.json_object("results/plans.json")
        for scenario in scenarios:
            plan = plans.get(scenario["id"], [])
            actions = []
            if isinstance(plan, list):
                for action in plan[: push_sim.MAX_STEPS]:
                    try:
                        command = (float(action[0]), float(action[1]))
                    except (TypeError, ValueError, IndexError):
                        command = (0.0, 0.0)
                    actions.append(tuple(value if math.isfinite(value) else 0.0 for value in command))
            results[scenario["id"]] = push_sim.replay(scenario, actions)
        grader.cache["replays"] = results
    return grader.cache["replays"]


def success_rate():
    return sum(r["success"] for r in replays().values()) / len(scenarios)


grader.deliverables(0.1)
grader.protected_assets(0.0, cap=20)
grader.reproducibility(0.1, ["results/plans.json", "results/metrics.json", "results/ablation.json"])


@grader.part("replayed_success_rate", 0.45)
def _():
    results = replays()
    rate = success_rate()
    walls = [s["id"] for s in scenarios if s["obstacles"]]
    wall_rate = sum(results[i]["success"] for i in walls) / max(1, len(walls))
    return linear(rate, 0.9, 0.2), f"{100 * rate:.0f} % of scenarios succeed in the original simulator ({100 * wall_rate:.0f} % of those with a wall)"


@grader.part("final_distance", 0.1)
def _():
    mean = float(np.mean([r["final_distance"] for r in replays().values()]))
    return linear(mean, 0.05, 0.5), f"mean final puck-target distance {mean:.3f} m"


@grader.part("reported_metrics_replayed", 0.15)
def _():
    metrics = ws.json_object("results/metrics.json")
    reported = number_at(metrics, "success_rate", "results/metrics.json")
    if not 0 <= reported <= 1:
        raise Fail("results/metrics.json success_rate must be between 0 and 1")
    distance = number_at(metrics, "mean_final_distance_m", "results/metrics.json")
    steps = number_at(metrics, "mean_steps", "results/metrics.json")
    results = replays().values()
    replayed_distance = float(np.mean([r["final_distance"] for r in results]))
    replayed_steps = float(np.mean([r["steps"] for r in results]))
    score = (
        0.5 * linear(abs(reported - success_rate()), 0.03, 0.3)
        + 0.25 * linear(abs(distance - replayed_distance), 0.005 + 0.02 * replayed_distance, 0.1 + 0.5 * replayed_distance)
        + 0.25 * linear(abs(steps - replayed_steps), 1.0, 50.0)
    )
    return score, (
        f"reported vs replayed in the original simulator: success rate {reported:.2f} vs {success_rate():.2f}, "
        f"mean final distance {distance:.3f} vs {replayed_distance:.3f} m, mean steps {steps:.1f} vs {replayed_steps:.1f}"
    )


@grader.part("ablation_format", 0.05)
def _():
    return ablation_variants(ws, ["success_rate"], "strategies")


@grader.part("report_numbers", 0.05)
def _():
    return report_numbers(ws, "research_report.md", "results/metrics.json", ["success_rate", "mean_final_distance_m"])


grader.emit()
