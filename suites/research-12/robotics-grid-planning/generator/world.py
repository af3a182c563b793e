# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""robotics-grid-planning: the planted world (withheld).

Five 48x48 maps (open fields, rooms with doors, cluttered) with obstacles ('#') and mud ('~', three times the cost of
plain ground '.'). Moves are 8-connected; a move costs its length (1 or sqrt 2) times the mean cost of the two cells;
a diagonal move may not cut an obstacle's corner. The grader finds every optimal cost with an exact solver.
"""

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, dijkstra

from genlib import stream

SIZE = 48
N_MAPS = 5
QUERIES_PER_MAP = 30
COSTS = {".": 1.0, "~": 3.0}
MOVES = [(-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]


def make_map(rng, style):
    grid = np.full((SIZE, SIZE), ".")
    for _ in range(int(rng.integers(6, 12))):  # mud patches
        r, c, h, w = rng.integers(0, SIZE, 2).tolist() + rng.integers(3, 10, 2).tolist()
        grid[r : r + h, c : c + w] = "~"
    if style == "rooms":
        for k in range(12, SIZE, 12):
            grid[k, :] = "#"
            grid[:, k] = "#"
        for k in range(12, SIZE, 12):
            for start in range(0, SIZE, 12):
                grid[k, start + int(rng.integers(1, 11))] = "."
                grid[start + int(rng.integers(1, 11)), k] = "."
    else:
        count = 25 if style == "open" else 60
        for _ in range(count):
            r, c = rng.integers(0, SIZE, 2)
            h, w = (1, int(rng.integers(3, 12))) if rng.random() < 0.5 else (int(rng.integers(3, 12)), 1)
            if style == "cluttered" and rng.random() < 0.3:
                h, w = int(rng.integers(2, 4)), int(rng.integers(2, 4))
            grid[r : r + h, c : c + w] = "#"
    return grid


def graph(grid):
    """Sparse move graph with the cost and corner-cutting rules."""
    rows, cols, weights = [], [], []
    free = grid != "#"
    for r in range(SIZE):
        for c in range(SIZE):
            if not free[r, c]:
                continue
            for dr, dc in MOVES:
                nr, nc = r + dr, c + dc
                if not (0 <= nr < SIZE and 0 <= nc < SIZE) or not free[nr, nc]:
                    continue
                if dr and dc and not (free[r + dr, c] and free[r, c + dc]):
                    continue
                length = np.sqrt(2.0) if dr and dc else 1.0
                rows.append(r * SIZE + c)
                cols.append(nr * SIZE + nc)
                weights.append(length * (COSTS[grid[r, c]] + COSTS[grid[nr, nc]]) / 2)
    return coo_matrix((weights, (rows, cols)), shape=(SIZE * SIZE, SIZE * SIZE)).tocsr()


def maps_and_queries(seed):
    rng = stream(seed, "maps")
    styles = ["open", "rooms", "cluttered", "open", "cluttered"]
    maps, queries = [], []
    for index, style in enumerate(styles):
        grid = make_map(rng, style)
        g = graph(grid)
        _, labels = connected_components(g, directed=False)
        free = np.flatnonzero(grid.ravel() != "#")
        main = np.bincount(labels[free]).argmax()
        cells = free[labels[free] == main]
        made = 0
        while made < QUERIES_PER_MAP:
            a, b = rng.choice(cells, 2, replace=False)
            (ar, ac), (br, bc) = divmod(int(a), SIZE), divmod(int(b), SIZE)
            if max(abs(ar - br), abs(ac - bc)) < 15:
                continue
            queries.append({"id": f"q{len(queries) + 1:03d}", "map": f"map_{index + 1}", "start": [ar, ac], "goal": [br, bc]})
            made += 1
        maps.append(grid)
    return maps, queries


def optimal_costs(maps, queries):
    out = {}
    for index, grid in enumerate(maps):
        mine = [q for q in queries if q["map"] == f"map_{index + 1}"]
        starts = [q["start"][0] * SIZE + q["start"][1] for q in mine]
        distances = dijkstra(graph(grid), indices=starts)
        for row, q in zip(distances, mine):
            out[q["id"]] = float(row[q["goal"][0] * SIZE + q["goal"][1]])
    return out


def path_cost(grid, path):
    """(cost, problem or None, corner_cut) for a path of [row, col] cells."""
    cost, corner_cut = 0.0, False
    for (r, c), (nr, nc) in zip(path, path[1:]):
        dr, dc = nr - r, nc - c
        if max(abs(dr), abs(dc)) != 1:
            return None, f"jump from {[r, c]} to {[nr, nc]}", corner_cut
        if not (0 <= nr < SIZE and 0 <= nc < SIZE) or grid[nr, nc] == "#":
            return None, f"enters obstacle or leaves the map at {[nr, nc]}", corner_cut
        if dr and dc and (grid[r + dr, c] == "#" or grid[r, c + dc] == "#"):
            corner_cut = True
        length = np.sqrt(2.0) if dr and dc else 1.0
        cost += length * (COSTS[grid[r, c]] + COSTS[grid[nr, nc]]) / 2
    return cost, None, corner_cut
