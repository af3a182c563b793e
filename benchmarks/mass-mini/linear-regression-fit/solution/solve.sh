#!/usr/bin/env bash
# Reference solution for linear-regression-fit.
set -euo pipefail
mkdir -p results
python3 - <<'PY'
import csv, json

with open("experiment.csv", newline="") as fh:
    rows = [r for r in csv.DictReader(fh) if r["valid"].strip() == "1"]
x = [float(r["dose"]) for r in rows]
y = [float(r["response"]) for r in rows]
n = len(x)
mx, my = sum(x) / n, sum(y) / n
slope = sum((a - mx) * (b - my) for a, b in zip(x, y)) / sum((a - mx) ** 2 for a in x)
intercept = my - slope * mx
ss_res = sum((b - intercept - slope * a) ** 2 for a, b in zip(x, y))
ss_tot = sum((b - my) ** 2 for b in y)
out = {
    "n": n,
    "slope": slope,
    "intercept": intercept,
    "r_squared": 1 - ss_res / ss_tot,
    "predicted_at_12_5": intercept + slope * 12.5,
}
with open("results/fit.json", "w") as fh:
    json.dump(out, fh, indent=2)
PY
