# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of robotics-grid-planning (withheld). Prints the grade as JSON."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from gradelib import Fail, Grader, ablation_variants, linear, number_at, report_numbers  # noqa: E402

grader = Grader("robotics-grid-planning")
ws = grader.workspace
maps, queries = world.maps_and_queries(grader.seed)
grids = {f"map_{i + 1}": grid for i, grid in enumerate(maps)}
optimal = world.optimal_costs(maps, queries)
OPTIMAL_TOLERANCE = 1e-6  # relative: a path costlier than this over the exact optimum is not the cheapest path


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


def true_costs():
    """{query id: the cost under the rules} of every valid path that cuts no corner."""
    return {query_id: cost for query_id, (cost, _, cut) in checked_paths().items() if cost is not None and not cut}


grader.deliverables(0.1)
grader.reproducibility(0.1, ["results/paths.json", "results/planner_stats.csv", "results/metrics.json", "results/ablation.json"])


@grader.part("path_validity", 0.15)
def _():
    results = checked_paths()
    valid = sum(cost is not None for cost, _, _ in results.values())
    problems = sorted({problem for _, problem, _ in results.values() if problem})
    return valid / len(queries), f"{valid} of {len(queries)} paths valid" + (f" ({'; '.join(problems[:3])})" if problems else "")


@grader.part("no_corner_cutting", 0.1)
def _():
    clean = len(true_costs())
    return clean / len(queries), f"{clean} of {len(queries)} paths valid without cutting an obstacle corner"


@grader.part("optimality", 0.3)
def _():
    costs = true_costs()
    excess = [costs[q["id"]] / optimal[q["id"]] - 1 for q in queries if q["id"] in costs]
    cheapest = sum(ratio <= OPTIMAL_TOLERANCE for ratio in excess)
    share = cheapest / len(queries)
    mean_excess = f"{100 * float(np.mean(excess)):.2f} %" if excess else "n/a"
    # The task asks for the cheapest path of every query: each costlier path is a failure, however small its excess.
    return linear(share, 1.0, 0.7), (
        f"{cheapest} of {len(queries)} paths cost the exact optimum (full marks at all, none at 70 %); "
        f"mean excess {mean_excess} over the optimum on {len(excess)} valid paths"
    )


@grader.part("reported_costs_match", 0.1)
def _():
    reported = ws.csv_numeric("results/planner_stats.csv", "query_id", ("cost", "expansions"))
    costs = {query_id: cost for query_id, (cost, _, _) in checked_paths().items() if cost is not None}
    matches = sum(
        q["id"] in costs and q["id"] in reported and abs(reported[q["id"]][0] - costs[q["id"]]) <= 1e-3 * max(1.0, costs[q["id"]])
        for q in queries
    )
    return matches / len(queries), f"reported cost equals the path's true cost for {matches} of {len(queries)} queries"


@grader.part("metrics_match", 0.05)
def _():
    metrics = ws.json_object("results/metrics.json")
    stats = ws.csv_numeric("results/planner_stats.csv", "query_id", ("cost", "expansions"))
    costs = checked_paths()
    true_mean = float(np.mean([cost for cost, _, _ in costs.values() if cost is not None] or [np.nan]))
    checks = {
        "n_queries": number_at(metrics, "n_queries", "results/metrics.json") == len(queries),
        "n_paths": number_at(metrics, "n_paths", "results/metrics.json") == sum(c is not None for c, _, _ in costs.values()),
        "mean_path_cost": abs(number_at(metrics, "mean_path_cost", "results/metrics.json") - true_mean) <= 1e-3 * true_mean,
        "mean_expansions": abs(number_at(metrics, "mean_expansions", "results/metrics.json") - float(np.mean([e for _, e in stats.values()]))) <= 0.5,
        "heuristic": isinstance(metrics.get("heuristic"), str) and metrics["heuristic"].strip() != "",
    }
    wrong = [key for key, ok in checks.items() if not ok]
    reason = f"{len(checks) - len(wrong)} of {len(checks)} metrics agree with the paths and results/planner_stats.csv"
    return (len(checks) - len(wrong)) / len(checks), reason + (f" (not: {', '.join(wrong)})" if wrong else "")


@grader.part("ablation_format", 0.05)
def _():
    return ablation_variants(ws, ["mean_cost", "mean_expansions"], "variants")


@grader.part("report_numbers", 0.05)
def _():
    return report_numbers(ws, "research_report.md", "results/metrics.json", ["mean_path_cost", "mean_expansions"])


grader.emit()
