"""Checks results/merged.csv against the join recomputed from the
verifier's own copies of customers.csv and orders.csv. Reward 1 only when
the header, the row order and every row match."""

import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = sys.argv[1] if len(sys.argv) > 1 else "/logs/verifier"
HEADER = ["order_id", "customer_id", "name", "country", "amount", "order_date"]


def truth():
    with open(os.path.join(HERE, "customers.csv"), newline="") as fh:
        current = {}
        for r in csv.DictReader(fh):
            cid = r["customer_id"]
            if cid not in current or r["updated_at"] > current[cid]["updated_at"]:
                current[cid] = r
    with open(os.path.join(HERE, "orders.csv"), newline="") as fh:
        orders = {}
        for r in csv.DictReader(fh):
            orders.setdefault(int(r["order_id"]), r)
    rows = []
    for oid in sorted(orders):
        o = orders[oid]
        c = current.get(o["customer_id"])
        if c is None:
            continue
        rows.append([oid, o["customer_id"], c["name"], c["country"], float(o["amount"]), o["order_date"]])
    return rows


def parse(row):
    if len(row) != len(HEADER):
        return None
    try:
        return [int(row[0]), row[1].strip(), row[2].strip(), row[3].strip(),
                float(row[4]), row[5].strip()]
    except ValueError:
        return None


def same(a, b):
    return a is not None and a[:4] == b[:4] and a[5] == b[5] and abs(a[4] - b[4]) <= 1e-6


def main():
    want = truth()
    reward = 0
    try:
        with open(os.path.join("results", "merged.csv"), newline="", encoding="utf-8") as fh:
            got = list(csv.reader(fh))
        got = [r for r in got if r]  # tolerate a trailing blank line
        if not got:
            raise ValueError("empty file")
        header = [h.strip() for h in got[0]]
        if header != HEADER:
            raise ValueError("header is %r, want %r" % (header, HEADER))
        body = [parse(r) for r in got[1:]]
        problems = []
        if len(body) != len(want):
            problems.append("%d data rows, want %d" % (len(body), len(want)))
        for i, (g, w) in enumerate(zip(body, want)):
            if not same(g, w):
                problems.append("row %d: got %r, want %r" % (i + 1, got[i + 1], w))
        for p in problems[:10]:
            print(p)
        reward = 0 if problems else 1
    except Exception as exc:
        print("cannot check results/merged.csv: %s" % exc)
    print("reward %d" % reward)
    with open(os.path.join(LOGS, "reward.txt"), "w") as fh:
        fh.write("%d\n" % reward)


if __name__ == "__main__":
    main()
