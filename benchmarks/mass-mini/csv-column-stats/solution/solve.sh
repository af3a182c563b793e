#!/usr/bin/env bash
# Reference solution for csv-column-stats.
set -euo pipefail
mkdir -p results
python3 - <<'PY'
import csv, json, statistics

with open("measurements.csv", newline="") as fh:
    rows = list(csv.DictReader(fh))
out = {}
for col in rows[0]:
    if col == "sensor_id":
        continue
    vals = [float(r[col]) for r in rows if r[col].strip() not in ("", "NA")]
    out[col] = {
        "count": len(vals),
        "mean": statistics.fmean(vals),
        "std": statistics.stdev(vals),
        "min": min(vals),
        "max": max(vals),
        "median": statistics.median(vals),
    }
with open("results/stats.json", "w") as fh:
    json.dump(out, fh, indent=2)
PY
