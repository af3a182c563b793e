# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the input of demo-volatility for one seed: data/prices.csv."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import world  # noqa: E402
from demolib import generator_args, write_csv  # noqa: E402


def main():
    seed, out = generator_args(__doc__)
    rows = [(str(day + 1), f"{price:.2f}") for day, price in enumerate(world.closes(seed))]
    write_csv(out / "prices.csv", ["day", "close"], rows)


if __name__ == "__main__":
    main()
