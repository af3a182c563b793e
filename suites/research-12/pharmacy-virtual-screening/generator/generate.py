# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the inputs of pharmacy-virtual-screening for one seed: the measured training set and the library."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import world  # noqa: E402
from genlib import parse_args, write_csv  # noqa: E402


def main():
    seed, out = parse_args(__doc__)
    columns = ["compound_id", "scaffold", *world.PHYSCHEM, *world.BITS, world.LEAK]
    digits = {"mw": 1, "logp": 2, "tpsa": 1, "fsp3": 3, "pic50": 2}
    train = world.library(seed, "train")
    write_csv(out / "train.csv", [*columns, "pic50"], [train[c] for c in [*columns, "pic50"]], digits=digits)
    screen = world.library(seed, "library")
    write_csv(out / "library.csv", columns, [screen[c] for c in columns], digits=digits)


if __name__ == "__main__":
    main()
