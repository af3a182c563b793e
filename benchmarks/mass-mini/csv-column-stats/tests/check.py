"""Checks results/stats.json against statistics recomputed from the
verifier's own copy of measurements.csv. Reward: the fraction of the
(column, statistic) values that are right."""

import csv
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = sys.argv[1] if len(sys.argv) > 1 else "/logs/verifier"
KEYS = ["count", "mean", "std", "min", "max", "median"]


def truth():
    with open(os.path.join(HERE, "measurements.csv"), newline="") as fh:
        rows = list(csv.DictReader(fh))
    cols = [c for c in rows[0].keys() if c != "sensor_id"]
    out = {}
    for c in cols:
        vals = [float(r[c]) for r in rows if r[c].strip() not in ("", "NA")]
        out[c] = {
            "count": len(vals),
            "mean": statistics.fmean(vals),
            "std": statistics.stdev(vals),
            "min": min(vals),
            "max": max(vals),
            "median": statistics.median(vals),
        }
    return out


def close(got, want):
    if isinstance(got, bool) or not isinstance(got, (int, float)):
        return False
    if not math.isfinite(got):
        return False
    return abs(got - want) <= 1e-6 + 1e-5 * abs(want)


def main():
    want = truth()
    total = sum(len(v) for v in want.values())
    correct = 0
    try:
        with open(os.path.join("results", "stats.json"), encoding="utf-8") as fh:
            got = json.load(fh)
    except Exception as exc:  # missing or unreadable
        print("cannot read results/stats.json: %s" % exc)
        got = {}
    if not isinstance(got, dict):
        print("results/stats.json is not a JSON object")
        got = {}
    for col, stats in want.items():
        g = got.get(col)
        if not isinstance(g, dict):
            print("%s: missing" % col)
            continue
        for k in KEYS:
            ok = close(g.get(k), stats[k])
            correct += ok
            if not ok:
                print("%s.%s: got %r, want %r" % (col, k, g.get(k), stats[k]))
    reward = correct / total
    print("correct %d of %d -> reward %.4f" % (correct, total, reward))
    with open(os.path.join(LOGS, "reward.json"), "w") as fh:
        json.dump({"reward": reward, "values_correct": correct, "values_total": total}, fh)


if __name__ == "__main__":
    main()
