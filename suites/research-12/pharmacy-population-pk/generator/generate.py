# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the inputs of pharmacy-population-pk for one seed: the concentration-time data of a single-dose study."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import world  # noqa: E402
from genlib import parse_args, stream, write_csv  # noqa: E402


def main():
    seed, out = parse_args(__doc__)
    truth = world.truth(seed)
    rows = world.study(truth, stream(seed, "study"))
    header = ["subject", "weight_kg", "dose_mg", "time_h", "concentration_mg_L", "blq"]
    write_csv(out / "pk.csv", header, list(zip(*rows)), digits={"weight_kg": 1, "time_h": 2, "concentration_mg_L": 4})


if __name__ == "__main__":
    main()
