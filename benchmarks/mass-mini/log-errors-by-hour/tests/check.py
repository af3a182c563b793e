"""Checks results/errors_by_hour.json against counts recomputed from the
verifier's own copy of app.log. Reward 1 only on an exact match."""

import datetime as dt
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = sys.argv[1] if len(sys.argv) > 1 else "/logs/verifier"
ENTRY = re.compile(
    r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(Z|[+-]\d{2}:\d{2}) (DEBUG|INFO|WARN|ERROR) \[([^\]]+)\] (.*)$")


def truth():
    counts = {}
    with open(os.path.join(HERE, "app.log"), encoding="utf-8") as fh:
        for line in fh:
            m = ENTRY.match(line.rstrip("\n"))
            if not m or m.group(3) != "ERROR":
                continue
            stamp, off = m.group(1), m.group(2)
            t = dt.datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%S")
            if off != "Z":
                sign = 1 if off[0] == "+" else -1
                t -= sign * dt.timedelta(hours=int(off[1:3]), minutes=int(off[4:6]))
            hour = t.strftime("%Y-%m-%dT%H")
            msg = m.group(5)
            etype = msg.split(":", 1)[0].strip() if ":" in msg else "Unknown"
            counts.setdefault(hour, {})
            counts[hour][etype] = counts[hour].get(etype, 0) + 1
    return counts


def main():
    want = truth()
    reward = 0
    try:
        with open(os.path.join("results", "errors_by_hour.json"), encoding="utf-8") as fh:
            got = json.load(fh)
        if not isinstance(got, dict):
            raise ValueError("not a JSON object")
        problems = []
        for hour in sorted(set(want) | set(got)):
            g, w = got.get(hour), want.get(hour)
            if g != w or not isinstance(g, dict) or any(isinstance(v, bool) for v in g.values()):
                problems.append("%s: got %r, want %r" % (hour, g, w))
        for p in problems[:15]:
            print(p)
        reward = 0 if problems else 1
    except Exception as exc:
        print("cannot check results/errors_by_hour.json: %s" % exc)
    print("reward %d" % reward)
    with open(os.path.join(LOGS, "reward.txt"), "w") as fh:
        fh.write("%d\n" % reward)


if __name__ == "__main__":
    main()
