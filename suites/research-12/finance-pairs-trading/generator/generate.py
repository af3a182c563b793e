# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the inputs of finance-pairs-trading for one seed: daily closes of sixteen stocks."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from genlib import business_dates, parse_args, stream, write_csv  # noqa: E402


def main():
    seed, out = parse_args(__doc__)
    truth = world.truth(seed)
    log_prices, _ = world.simulate(truth, stream(seed, "history"), world.N_DAYS)
    dates = business_dates("2019-01-02", world.N_DAYS)
    write_csv(out / "prices.csv", ["date", *world.TICKERS], [dates, *np.exp(log_prices).T], digits=4)


if __name__ == "__main__":
    main()
