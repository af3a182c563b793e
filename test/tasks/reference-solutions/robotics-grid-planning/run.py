"""Reference solution for robotics-grid-planning: `python3 run.py` (careful), `--careless` (every trap) or
`--trap <name>`: corner-cutting (diagonal moves past an obstacle's corner), inadmissible-heuristic (Manhattan distance,
which overestimates diagonal moves), mud-ignored (every cell costs 1 while planning)."""

import csv
import heapq
import math
from pathlib import Path

import numpy as np

import refkit

TRAPS = refkit.fallen_traps({"corner-cutting", "inadmissible-heuristic", "mud-ignored"})
COSTS = {".": 1.0, "~": 3.0}
MOVES = [(-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]
SQRT2 = math.sqrt(2)


def octile(a, b):
    dr, dc = abs(a[0] - b[0]), abs(a[1] - b[1])
    return (dr + dc) + (SQRT2 - 2) * min(dr, dc)


def manhattan(a, b):
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def astar(grid, start, goal, weight=1.0):
    size = len(grid)
    heuristic = manhattan if "inadmissible-heuristic" in TRAPS else octile  # octile x cheapest cell cost (1) is admissible
    best = {start: 0.0}
    parent = {start: None}
    frontier = [(weight * heuristic(start, goal), 0.0, start)]
    expansions, cost = 0, math.inf
    while frontier:
        _, g, cell = heapq.heappop(frontier)
        if g > best[cell]:
            continue
        expansions += 1
        if cell == goal:
            cost = g
            break
        r, c = cell
        for dr, dc in MOVES:
            nr, nc = r + dr, c + dc
            if not (0 <= nr < size and 0 <= nc < size) or grid[nr][nc] == "#":
                continue
            cut = "corner-cutting" in TRAPS
            if dr and dc and not cut and (grid[r + dr][c] == "#" or grid[r][c + dc] == "#"):
                continue
            terrain = 1.0 if "mud-ignored" in TRAPS else (COSTS[grid[r][c]] + COSTS[grid[nr][nc]]) / 2
            step = (SQRT2 if dr and dc else 1.0) * terrain
            ng = g + step
            if ng < best.get((nr, nc), math.inf):
                best[(nr, nc)] = ng
                parent[(nr, nc)] = cell
                heapq.heappush(frontier, (ng + weight * heuristic((nr, nc), goal), ng, (nr, nc)))
    path, cell = [], goal
    while cell is not None:
        path.append([cell[0], cell[1]])
        cell = parent[cell]
    return path[::-1], expansions, cost


def true_cost(grid, path):
    return sum((SQRT2 if (b[0] - a[0]) and (b[1] - a[1]) else 1.0) * (COSTS[grid[a[0]][a[1]]] + COSTS[grid[b[0]][b[1]]]) / 2
               for a, b in zip(path, path[1:]))


def main():
    refkit.prepare()
    grids = {p.stem: [list(line) for line in p.read_text().split()] for p in sorted(Path("data/maps").glob("*.txt"))}
    queries = list(csv.DictReader(open("data/queries.csv")))
    paths, stats = {}, []
    for q in queries:
        grid = grids[q["map"]]
        start, goal = (int(q["start_row"]), int(q["start_col"])), (int(q["goal_row"]), int(q["goal_col"]))
        path, expansions, cost = astar(grid, start, goal)
        paths[q["query_id"]] = path
        stats.append((q["query_id"], cost, expansions))  # the planner's own cost, as a team would report it
    refkit.save_json("paths.json", paths)
    with open("results/planner_stats.csv", "w") as f:
        f.write("query_id,cost,expansions\n" + "".join(f"{i},{c:.6f},{e}\n" for i, c, e in stats))

    subset = queries[::5]
    ablation = {}
    for weight in (1.0, 1.5, 3.0):
        costs, expansions = [], []
        for q in subset:
            grid = grids[q["map"]]
            path, n, _ = astar(grid, (int(q["start_row"]), int(q["start_col"])), (int(q["goal_row"]), int(q["goal_col"])), weight)
            costs.append(true_cost(grid, path))
            expansions.append(n)
        ablation[f"weighted_astar_{weight}"] = {"mean_cost": float(np.mean(costs)), "mean_expansions": float(np.mean(expansions))}
    base = ablation["weighted_astar_1.0"]
    for v in ablation.values():
        v["cost_increase_pct"] = 100 * (v["mean_cost"] / base["mean_cost"] - 1)
    refkit.save_json("ablation.json", ablation)
    refkit.save_json("metrics.json", {
        "n_queries": len(queries), "n_paths": len(paths), "mean_path_cost": float(np.mean([s[1] for s in stats])),
        "mean_expansions": float(np.mean([s[2] for s in stats])), "heuristic": "manhattan" if "inadmissible-heuristic" in TRAPS else "octile",
    })
    fig, ax = refkit.figure("Example path on map_2", "column", "row")
    grid = np.array(grids["map_2"])
    ax.imshow((grid == "#") * 2 + (grid == "~"), cmap="Greys")
    example = paths[[q["query_id"] for q in queries if q["map"] == "map_2"][0]]
    ax.plot([p[1] for p in example], [p[0] for p in example], "r-")
    refkit.save_plot(fig, "example_path.png")
    fig, ax = refkit.figure("Weighted A*: expansions versus cost", "mean expansions", "cost increase (%)")
    ax.plot([v["mean_expansions"] for v in ablation.values()], [v["cost_increase_pct"] for v in ablation.values()], "o-")
    refkit.save_plot(fig, "expansions_tradeoff.png")
    refkit.write_report("Path planning on five terrain maps", [
        ("Summary", f"A* with the octile-distance heuristic returns cost-optimal paths for all {len(queries)} queries while respecting the no-corner-cutting rule; mean path cost {np.mean([s[1] for s in stats]):.2f}, mean expansions {np.mean([s[2] for s in stats]):.0f}."),
        ("Data", "Five 48 by 48 maps with obstacles and mud (three times the cost of plain ground), 30 queries each. Moves are 8-connected; a move costs its length times the mean cost of the two cells; a diagonal step is forbidden when either orthogonal neighbour is an obstacle."),
        ("Method", "A* search where the heuristic is the octile distance, which never overestimates because the cheapest cell costs 1; hence the first time the goal is expanded its cost is optimal. Weighted variants (heuristic multiplied by 1.5 and 3) trade optimality for fewer expansions and are evaluated on a subset of queries."),
        ("Results", refkit.table([[k, f"{v['mean_expansions']:.0f}", f"{v['cost_increase_pct']:.2f}"] for k, v in ablation.items()], ["planner", "mean expansions", "cost increase %"]) + "\n\nPlots: deliverables/plots/example_path.png and deliverables/plots/expansions_tradeoff.png."),
        ("Limitations", "The heuristic ignores mud, so expansions grow in muddy regions; a learned or precomputed heuristic could reduce them but must stay admissible to keep optimality. Reproduce with python3 run.py."),
    ])


if __name__ == "__main__":
    main()
