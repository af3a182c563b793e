# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the inputs of finance-signal-timing for one seed: prices and features."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from genlib import business_dates, parse_args, stream, write_csv  # noqa: E402


def main():
    seed, out = parse_args(__doc__)
    truth = world.truth(seed)
    features, returns = world.simulate(truth, stream(seed, "history"), world.N_DAYS)
    dates = business_dates("2017-01-02", world.N_DAYS)
    prices = np.vstack([np.ones((1, len(world.ASSETS))), np.cumprod(1 + returns[:-1], axis=0)]) * 100.0
    write_csv(out / "prices.csv", ["date", *world.ASSETS], [dates, *prices.T], digits=4)
    rows = [(d, a) for d in range(world.N_DAYS) for a in range(len(world.ASSETS))]
    columns = [[dates[d] for d, _ in rows], [world.ASSETS[a] for _, a in rows]]
    for name in world.FEATURES:
        columns.append([features[name][d, a] for d, a in rows])
    write_csv(out / "features.csv", ["date", "asset", *world.FEATURES], columns, digits=4)


if __name__ == "__main__":
    main()
