#!/usr/bin/env bash
# Reference solution for log-errors-by-hour.
set -euo pipefail
mkdir -p results
python3 - <<'PY'
import datetime as dt, json, re
from collections import defaultdict

entry = re.compile(r"^(\S+) (DEBUG|INFO|WARN|ERROR) \[([^\]]+)\] (.*)$")
counts = defaultdict(lambda: defaultdict(int))
with open("app.log", encoding="utf-8") as fh:
    for line in fh:
        m = entry.match(line.rstrip("\n"))
        if not m or m.group(2) != "ERROR":
            continue
        try:
            t = dt.datetime.fromisoformat(m.group(1).replace("Z", "+00:00"))
        except ValueError:
            continue
        if t.tzinfo is None:
            continue
        hour = t.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H")
        msg = m.group(4)
        etype = msg.split(":", 1)[0].strip() if ":" in msg else "Unknown"
        counts[hour][etype] += 1
with open("results/errors_by_hour.json", "w") as fh:
    json.dump({h: dict(v) for h, v in sorted(counts.items())}, fh, indent=2, sort_keys=True)
PY
