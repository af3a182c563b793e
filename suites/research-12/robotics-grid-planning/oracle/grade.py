# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of robotics-grid-planning (withheld). Prints the grade as JSON."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from gradelib import Fail, Grader, linear  # noqa: E402

grader = Grader("robotics-grid-planning")
ws = grader.workspace
maps, queries = world.maps_and_queries(grader.seed)
grids = {f"map_{i + 1}": grid for i, grid in enumerate(maps)}
optimal = world.optimal_costs(maps, queries)


def checked_paths():
    """{query id: (cost or None, problem or None, corner_cut)} for every query."""
    raw = ws.json_object("results/paths.json")
    out = {}
    for q in queries:
        path = raw.get(q["id"])
        if not isinstance(path, list) or len(path) < 2:
            out[q["id"]] = (None, "no path", False)
            continue
        try:
            cells = [[int(cell[0]), int(cell[1])] for cell in path]
        except (TypeError, ValueError, IndexError):
            out[q["id"]] = (None, "cells are not [row, col] pairs", False)
            continue
        if cells[0] != q["start"] or cells[-1] != q["goal"]:
            out[q["id"]] = (None, "does not run from start to goal", False)
            continue
        grid = grids[q["map"]]
        if any(not (0 <= r < world.SIZE and 0 <= c < world.SIZE) or grid[r, c] == "#" for r, c in cells):
            out[q["id"]] = (None, "leaves the map or enters an obstacle", False)
            continue
        out[q["id"]] = world.path_cost(grid, cells)
    return out


grader.deliverables(0.15)


@grader.part("path_validity", 0.3)
def _():
    results = checked_paths()
    valid = sum(cost is not None for cost, _, _ in results.values())
    problems = sorted({problem for _, problem, _ in results.values() if problem})
    return valid / len(queries), f"{valid} of {len(queries)} paths valid" + (f" ({'; '.join(problems[:3])})" if problems else "")


@grader.part("no_corner_cutting", 0.1)
def _():
    results = checked_paths()
    clean = sum(cost is not None and not cut for cost, _, cut in results.values())
    return clean / len(queries), f"{clean} of {len(queries)} paths valid without cutting an obstacle corner"


@grader.part("optimality", 0.3)
def _():
    results = checked_paths()
    scores, excess = [], []
    for q in queries:
        cost, _, cut = results[q["id"]]
        if cost is None or cut:
            scores.append(0.0)
            continue
        ratio = cost / optimal[q["id"]] - 1
        excess.append(ratio)
        scores.append(linear(ratio, 0.001, 0.10))
    mean_excess = 100 * float(np.mean(excess)) if excess else float("nan")
    return float(np.mean(scores)), f"mean excess cost {mean_excess:.2f} % over the exact optimum on {len(excess)} valid paths"


@grader.part("reported_costs_match", 0.15)
def _():
    reported = ws.csv_numeric("results/planner_stats.csv", "query_id", ("cost", "expansions"))
    results = checked_paths()
    matches = 0
    for q in queries:
        cost = results[q["id"]][0]
        if cost is not None and q["id"] in reported and abs(reported[q["id"]][0] - cost) <= 1e-3 * max(1.0, cost):
            matches += 1
    if not reported:
        raise Fail("results/planner_stats.csv has no rows")
    return matches / len(queries), f"reported cost equals the path's true cost for {matches} of {len(queries)} queries"


grader.emit()
