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
from gradelib import Fail, Grader, linear, number_at  # noqa: E402

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


grader.deliverables(0.15)
grader.protected_assets(0.0, cap=20)


@grader.part("replayed_success_rate", 0.5)
def _():
    results = replays()
    rate = sum(r["success"] for r in results.values()) / len(scenarios)
    walls = [s["id"] for s in scenarios if s["obstacles"]]
    wall_rate = sum(results[i]["success"] for i in walls) / max(1, len(walls))
    return linear(rate, 0.9, 0.2), f"{100 * rate:.0f} % of scenarios succeed in the original simulator ({100 * wall_rate:.0f} % of those with a wall)"


@grader.part("final_distance", 0.1)
def _():
    mean = float(np.mean([r["final_distance"] for r in replays().values()]))
    return linear(mean, 0.05, 0.5), f"mean final puck-target distance {mean:.3f} m"


@grader.part("reported_success_replayed", 0.25)
def _():
    reported = number_at(ws.json_object("results/metrics.json"), "success_rate", "results/metrics.json")
    rate = sum(r["success"] for r in replays().values()) / len(scenarios)
    if not 0 <= reported <= 1:
        raise Fail("success_rate must be between 0 and 1")
    return linear(abs(reported - rate), 0.03, 0.3), f"reported success rate {reported:.2f}, replayed {rate:.2f} in the original simulator"


grader.emit()
