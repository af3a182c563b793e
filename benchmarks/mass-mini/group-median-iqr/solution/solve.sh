#!/usr/bin/env bash
# Reference solution for group-median-iqr.
set -euo pipefail
mkdir -p results
python3 - <<'PY'
import csv, json, math

def quantile(xs, p):
    h = (len(xs) - 1) * p
    lo = math.floor(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])

groups = {}
with open("latency.csv", newline="") as fh:
    for r in csv.DictReader(fh):
        v = r["latency_ms"].strip()
        if v and float(v) != -1:
            groups.setdefault(r["service"], []).append(float(v))
out = {}
for svc, xs in sorted(groups.items()):
    xs.sort()
    q1, med, q3 = quantile(xs, 0.25), quantile(xs, 0.5), quantile(xs, 0.75)
    out[svc] = {"n": len(xs), "median": med, "q1": q1, "q3": q3, "iqr": q3 - q1}
with open("results/summary.json", "w") as fh:
    json.dump(out, fh, indent=2)
PY
