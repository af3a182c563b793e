# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the inputs of robotics-grid-planning for one seed: five maps and the planning queries."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import world  # noqa: E402
from genlib import parse_args, write_csv  # noqa: E402


def main():
    seed, out = parse_args(__doc__)
    maps, queries = world.maps_and_queries(seed)
    (out / "maps").mkdir(exist_ok=True)
    for index, grid in enumerate(maps):
        (out / "maps" / f"map_{index + 1}.txt").write_text("\n".join("".join(row) for row in grid) + "\n")
    write_csv(out / "queries.csv", ["query_id", "map", "start_row", "start_col", "goal_row", "goal_col"],
              [[q["id"] for q in queries], [q["map"] for q in queries]] + [[q[k][i] for q in queries] for k in ("start", "goal") for i in (0, 1)])


if __name__ == "__main__":
    main()
