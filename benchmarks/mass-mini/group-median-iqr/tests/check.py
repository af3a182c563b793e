"""Checks results/summary.json against per-service quantiles recomputed
(linear interpolation) from the verifier's own copy of latency.csv.
Reward 1 only when every service and every value matches."""

import csv
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = sys.argv[1] if len(sys.argv) > 1 else "/logs/verifier"


def quantile(xs, p):
    h = (len(xs) - 1) * p
    lo = math.floor(h)
    if lo + 1 >= len(xs):
        return xs[lo]
    return xs[lo] + (h - lo) * (xs[lo + 1] - xs[lo])


def truth():
    groups = {}
    with open(os.path.join(HERE, "latency.csv"), newline="") as fh:
        for r in csv.DictReader(fh):
            v = r["latency_ms"].strip()
            if v == "" or float(v) == -1:
                continue
            groups.setdefault(r["service"], []).append(float(v))
    out = {}
    for svc, xs in groups.items():
        xs.sort()
        q1, med, q3 = quantile(xs, 0.25), quantile(xs, 0.5), quantile(xs, 0.75)
        out[svc] = {"n": len(xs), "median": med, "q1": q1, "q3": q3, "iqr": q3 - q1}
    return out


def close(got, want):
    if isinstance(got, bool) or not isinstance(got, (int, float)) or not math.isfinite(got):
        return False
    return abs(got - want) <= 1e-6 + 1e-5 * abs(want)


def main():
    want = truth()
    reward = 0
    try:
        with open(os.path.join("results", "summary.json"), encoding="utf-8") as fh:
            got = json.load(fh)
        if not isinstance(got, dict):
            raise ValueError("not a JSON object")
        problems = []
        extra = sorted(set(got) - set(want))
        if extra:
            problems.append("unexpected services: %r" % extra)
        for svc, stats in sorted(want.items()):
            g = got.get(svc)
            if not isinstance(g, dict):
                problems.append("%s: missing" % svc)
                continue
            for k, v in stats.items():
                if not close(g.get(k), v):
                    problems.append("%s.%s: got %r, want %r" % (svc, k, g.get(k), v))
        for p in problems[:15]:
            print(p)
        reward = 0 if problems else 1
    except Exception as exc:
        print("cannot check results/summary.json: %s" % exc)
    print("reward %d" % reward)
    with open(os.path.join(LOGS, "reward.txt"), "w") as fh:
        fh.write("%d\n" % reward)


if __name__ == "__main__":
    main()
