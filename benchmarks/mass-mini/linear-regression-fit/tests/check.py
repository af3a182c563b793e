"""Checks results/fit.json against an OLS fit recomputed from the verifier's
own copy of experiment.csv. Reward 1 when every key is within tolerance."""

import csv
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = sys.argv[1] if len(sys.argv) > 1 else "/logs/verifier"


def truth():
    with open(os.path.join(HERE, "experiment.csv"), newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["valid"].strip() == "1"]
    x = [float(r["dose"]) for r in rows]
    y = [float(r["response"]) for r in rows]
    n = len(x)
    mx, my = sum(x) / n, sum(y) / n
    sxx = sum((a - mx) ** 2 for a in x)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y))
    slope = sxy / sxx
    intercept = my - slope * mx
    ss_res = sum((b - intercept - slope * a) ** 2 for a, b in zip(x, y))
    ss_tot = sum((b - my) ** 2 for b in y)
    return {
        "n": n,
        "slope": slope,
        "intercept": intercept,
        "r_squared": 1 - ss_res / ss_tot,
        "predicted_at_12_5": intercept + slope * 12.5,
    }


def close(got, want):
    if isinstance(got, bool) or not isinstance(got, (int, float)) or not math.isfinite(got):
        return False
    return abs(got - want) <= 1e-6 + 1e-5 * abs(want)


def main():
    want = truth()
    reward = 0
    try:
        with open(os.path.join("results", "fit.json"), encoding="utf-8") as fh:
            got = json.load(fh)
        if not isinstance(got, dict):
            raise ValueError("not a JSON object")
        bad = [k for k in want if not close(got.get(k), want[k])]
        for k in bad:
            print("%s: got %r, want %r" % (k, got.get(k), want[k]))
        reward = 0 if bad else 1
    except Exception as exc:
        print("cannot check results/fit.json: %s" % exc)
    print("reward %d" % reward)
    with open(os.path.join(LOGS, "reward.txt"), "w") as fh:
        fh.write("%d\n" % reward)


if __name__ == "__main__":
    main()
