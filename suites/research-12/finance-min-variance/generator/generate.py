# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the inputs of finance-min-variance for one seed: recorded daily closes of forty assets."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from genlib import business_dates, parse_args, stream, write_csv  # noqa: E402


def main():
    seed, out = parse_args(__doc__)
    truth = world.truth(seed)
    _, recorded = world.simulate(truth, stream(seed, "history"), world.N_DAYS)
    start = stream(seed, "levels").uniform(20, 200, world.N_ASSETS)
    prices = np.vstack([start, start * np.cumprod(1 + recorded, axis=0)])
    dates = business_dates("2023-03-01", world.N_DAYS + 1)
    write_csv(out / "prices.csv", ["date", *world.TICKERS], [dates, *prices.T], digits=4)


if __name__ == "__main__":
    main()
