# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the inputs of finance-garch-volatility for one seed: recorded closing prints."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import world  # noqa: E402
from genlib import business_dates, parse_args, stream, write_csv  # noqa: E402


def main():
    seed, out = parse_args(__doc__)
    truth = world.truth(seed)
    returns = world.simulate(truth, stream(seed, "history"), world.N_RETURNS)
    _, recorded = world.recorded_prices(truth, returns)
    dates = business_dates("2014-01-02", len(recorded))
    write_csv(out / "prices.csv", ["date", "close"], [dates, recorded], digits=6)


if __name__ == "__main__":
    main()
