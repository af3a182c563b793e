#!/usr/bin/env bash
# Reference solution for join-customers-orders.
set -euo pipefail
mkdir -p results
python3 - <<'PY'
import csv

current = {}
with open("customers.csv", newline="") as fh:
    for r in csv.DictReader(fh):
        old = current.get(r["customer_id"])
        if old is None or r["updated_at"] > old["updated_at"]:
            current[r["customer_id"]] = r
orders = {}
with open("orders.csv", newline="") as fh:
    for r in csv.DictReader(fh):
        orders.setdefault(int(r["order_id"]), r)
with open("results/merged.csv", "w", newline="") as fh:
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(["order_id", "customer_id", "name", "country", "amount", "order_date"])
    for oid in sorted(orders):
        o = orders[oid]
        c = current.get(o["customer_id"])
        if c is not None:
            w.writerow([o["order_id"], o["customer_id"], c["name"], c["country"], o["amount"], o["order_date"]])
PY
