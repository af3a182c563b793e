# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the input of demo-potency for one seed: data/doses.csv."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import world  # noqa: E402
from demolib import generator_args, write_csv  # noqa: E402


def main():
    seed, out = generator_args(__doc__)
    rows = [(f"{dose:g}", f"{inhibition:.2f}") for dose, inhibition in world.wells(seed)]
    write_csv(out / "doses.csv", ["dose_uM", "inhibition"], rows)


if __name__ == "__main__":
    main()
