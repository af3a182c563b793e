#!/usr/bin/env python3
"""Regenerates the data files of the mass-mini tasks.

The files it writes are committed; nothing runs this at benchmark time. It
uses only the standard library and fixed seeds, so running it again gives the
same bytes on the same Python version. Files that a verifier needs in order to
recompute the truth are written twice: into the task's environment/ (what the
agent starts with) and into its tests/ (the verifier's own copy, which the
agent cannot edit). check.sh confirms the two copies are identical.

Usage: python3 generate_data.py   (from any directory)
"""

import csv
import datetime as dt
import io
import math
import os
import random

ROOT = os.path.dirname(os.path.abspath(__file__))


def write(task, rel, text, also_tests=False):
    for where in (["environment", "tests"] if also_tests else ["environment"]):
        path = os.path.join(ROOT, task, where, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", newline="") as fh:
            fh.write(text)


def write_tests_only(task, rel, text):
    path = os.path.join(ROOT, task, "tests", rel)
    with open(path, "w", newline="") as fh:
        fh.write(text)


def to_csv(header, rows):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return buf.getvalue()


def csv_column_stats():
    rng = random.Random(101)
    rows = []
    for i in range(60):
        sensor = "S%02d" % (i % 12 + 1)
        t = "%.2f" % rng.gauss(21.0, 3.0)
        h = "%.1f" % min(99.0, max(5.0, rng.gauss(55.0, 10.0)))
        p = "%.1f" % rng.gauss(1013.0, 6.0)
        w = "%.2f" % rng.expovariate(0.5)
        vals = [t, h, p, w]
        for k in range(4):
            r = rng.random()
            if r < 0.06:
                vals[k] = ""
            elif r < 0.10:
                vals[k] = "NA"
        rows.append([sensor] + vals)
    text = to_csv(["sensor_id", "temperature", "humidity", "pressure", "wind_speed"], rows)
    write("csv-column-stats", "measurements.csv", text, also_tests=True)


def linear_regression_fit():
    rng = random.Random(202)
    rows = []
    bad = set(rng.sample(range(40), 6))
    for i in range(40):
        dose = rng.uniform(0.0, 20.0)
        resp = 3.2 + 1.75 * dose + rng.gauss(0.0, 1.5)
        valid = 1
        if i in bad:
            valid = 0
            resp = resp + rng.choice([-1, 1]) * rng.uniform(15.0, 30.0)
        rows.append(["R%03d" % (i + 1), "%.2f" % dose, "%.3f" % resp, valid])
    text = to_csv(["run_id", "dose", "response", "valid"], rows)
    write("linear-regression-fit", "experiment.csv", text, also_tests=True)


FIRST = ["Ada", "Bruno", "Chen", "Dara", "Emil", "Farah", "Goran", "Hana", "Ivo",
         "Jana", "Kofi", "Lena", "Mateo", "Nia", "Oskar", "Priya", "Quinn", "Rosa",
         "Sami", "Tove", "Umar", "Vera", "Wen", "Xenia", "Yusuf"]
LAST = ["Berg", "Costa", "Dahl", "Eriksen", "Fontaine", "Gupta", "Hale", "Ibsen",
        "Jovanovic", "Kimura", "Lund", "Moreau", "Novak", "Okafor", "Petrov"]
COUNTRIES = ["NO", "SE", "DE", "FR", "ES", "IT", "NL", "PL", "PT", "FI"]


def join_customers_orders():
    rng = random.Random(303)
    customers = []
    base = dt.date(2023, 1, 1)
    for i in range(1, 26):
        cid = "C%03d" % i
        name = "%s %s" % (FIRST[i - 1], rng.choice(LAST))
        if i == 7:
            name = "Okafor, Nia"  # a name with a comma, so the CSV needs quoting
        country = rng.choice(COUNTRIES)
        day = base + dt.timedelta(days=rng.randrange(0, 300))
        customers.append([cid, name, country, day.isoformat()])
    # Six customers have a second (and one a third) record with another date.
    dups = []
    for i in rng.sample(range(25), 6):
        cid, name, country, day = customers[i]
        d0 = dt.date.fromisoformat(day)
        newer = rng.random() < 0.5
        shift = dt.timedelta(days=rng.randrange(10, 60))
        d1 = d0 + shift if newer else d0 - shift
        new_country = rng.choice([c for c in COUNTRIES if c != country])
        new_name = name + (" Jr" if rng.random() < 0.3 else "")
        dups.append([cid, new_name, new_country, d1.isoformat()])
    cid, name, country, day = dups[0]
    d2 = dt.date.fromisoformat(day) + dt.timedelta(days=90)
    dups.append([cid, name + "-Lee", rng.choice(COUNTRIES), d2.isoformat()])
    allc = customers + dups
    rng.shuffle(allc)
    write("join-customers-orders", "customers.csv",
          to_csv(["customer_id", "name", "country", "updated_at"], allc), also_tests=True)

    orders = []
    for k in range(50):
        oid = 1001 + k
        if k % 10 == 3:
            cust = "C%03d" % rng.randrange(26, 31)  # unknown customer
        else:
            cust = "C%03d" % rng.randrange(1, 26)
        amount = "%.2f" % rng.uniform(5.0, 400.0)
        odate = (dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(0, 180))).isoformat()
        orders.append([oid, cust, amount, odate])
    orders += [list(o) for o in rng.sample(orders, 6)]  # exact duplicate rows
    rng.shuffle(orders)
    write("join-customers-orders", "orders.csv",
          to_csv(["order_id", "customer_id", "amount", "order_date"], orders), also_tests=True)


def group_median_iqr():
    rng = random.Random(404)
    spec = [("auth", 7, 40.0), ("search", 24, 120.0), ("checkout", 15, 300.0),
            ("profile", 10, 60.0), ("images", 31, 90.0)]
    rows = []
    for svc, n, scale in spec:
        for _ in range(n):
            rows.append([svc, "%.1f" % (scale * math.exp(rng.gauss(0.0, 0.45)))])
        for _ in range(rng.randrange(1, 4)):
            rows.append([svc, "-1"])  # timeout sentinel
    rows.append(["search", ""])
    rng.shuffle(rows)
    out = [["q%04d" % (i + 1)] + r for i, r in enumerate(rows)]
    write("group-median-iqr", "latency.csv",
          to_csv(["request_id", "service", "latency_ms"], out), also_tests=True)


def log_errors_by_hour():
    rng = random.Random(505)
    comps = ["api", "db", "auth", "cache", "worker"]
    errors = [
        ("TimeoutError", ["upstream took 30s", "query exceeded 5000 ms", "lock wait"]),
        ("ConnectionResetError", ["peer closed socket", "reset by 10.0.3.7"]),
        ("ValueError", ["bad page size -1", "invalid date '2024-13-01'"]),
        ("KeyError", ["'user_id'", "'session'"]),
    ]
    untyped = ["disk usage above 95 percent", "worker pool exhausted"]
    infos = ["request served in 12 ms", "cache warm", "login ok for user 42",
             "job 77 finished", "GET /health 200"]
    warns = ["slow query: 1800 ms", "Error: rate limit near (80%)", "retrying after TimeoutError",
             "upstream answered ERROR: will retry", "ERROR budget at 70%"]
    zones = [(dt.timezone.utc, "Z")] * 6 + [
        (dt.timezone(dt.timedelta(hours=2)), "+02:00"),
        (dt.timezone(dt.timedelta(hours=-5)), "-05:00"),
        (dt.timezone(dt.timedelta(hours=5, minutes=30)), "+05:30"),
    ]
    start = dt.datetime(2024, 3, 5, 21, 35, 0, tzinfo=dt.timezone.utc)
    lines = []
    t = start
    while t < dt.datetime(2024, 3, 6, 2, 20, tzinfo=dt.timezone.utc):
        t = t + dt.timedelta(seconds=rng.randrange(20, 260))
        tz, suffix = rng.choice(zones)
        local = t.astimezone(tz)
        stamp = local.strftime("%Y-%m-%dT%H:%M:%S") + suffix
        r = rng.random()
        comp = rng.choice(comps)
        if r < 0.38:
            etype, msgs = rng.choice(errors)
            lines.append("%s ERROR [%s] %s: %s" % (stamp, comp, etype, rng.choice(msgs)))
            if rng.random() < 0.35:
                lines.append("    at %s.handle (%s.py:%d)" % (comp, comp, rng.randrange(10, 400)))
                lines.append("    raised ERROR in %s: TimeoutError: nested" % comp)
        elif r < 0.45:
            lines.append("%s ERROR [%s] %s" % (stamp, comp, rng.choice(untyped)))
        elif r < 0.58:
            lines.append("%s WARN [%s] %s" % (stamp, comp, rng.choice(warns)))
        elif r < 0.70:
            if rng.random() < 0.3:
                lines.append("%s DEBUG [%s] last ERROR code: %d" % (stamp, comp, rng.randrange(100)))
            else:
                lines.append("%s DEBUG [%s] state=%d" % (stamp, comp, rng.randrange(100)))
        else:
            lines.append("%s INFO [%s] %s" % (stamp, comp, rng.choice(infos)))
        if rng.random() < 0.03:
            lines.append("")
        if rng.random() < 0.02:
            lines.append("--- log rotated ---")
        if rng.random() < 0.02:
            lines.append(stamp[:13] + " ERROR [db")  # truncated write
    write("log-errors-by-hour", "app.log", "\n".join(lines) + "\n", also_tests=True)


def classify_three_species():
    rng = random.Random(606)
    # name: (leaf_length_mm, leaf_width_mm, stem_mass_g, vein_density) means
    means = {
        "alder": (82.0, 61.0, 1.9, 7.5),
        "birch": (64.0, 43.0, 1.2, 10.5),
        "cedar": (58.0, 31.0, 2.6, 9.0),
    }
    sds = (12.0, 9.0, 0.6, 1.7)

    def sample(label):
        m = means[label]
        ll = rng.gauss(m[0], sds[0])
        lw = rng.gauss(m[1], sds[1]) + 0.25 * (ll - m[0])
        sm = rng.gauss(m[2], sds[2])
        vd = rng.gauss(m[3], sds[3])
        ph = rng.gauss(6.2, 0.6)  # uninformative
        return ["%.1f" % ll, "%.1f" % lw, "%.3f" % sm, "%.2f" % vd, "%.2f" % ph]

    labels = list(means)
    header = ["id", "leaf_length_mm", "leaf_width_mm", "stem_mass_g", "vein_density", "soil_ph"]
    train = []
    for i in range(240):
        lab = labels[i % 3] if rng.random() < 0.9 else rng.choice(labels)
        train.append(["t%03d" % (i + 1)] + sample(lab) + [lab])
    rng.shuffle(train)
    write("classify-three-species", "train.csv", to_csv(header + ["species"], train))
    test_x, test_y = [], []
    for i in range(120):
        lab = labels[i % 3]
        test_x.append(["h%03d" % (i + 1)] + sample(lab))
        test_y.append(["h%03d" % (i + 1), lab])
    order = list(range(120))
    rng.shuffle(order)
    write("classify-three-species", "test_features.csv", to_csv(header, [test_x[i] for i in order]))
    write_tests_only("classify-three-species", "test_labels.csv",
                     to_csv(["id", "species"], [test_y[i] for i in order]))


if __name__ == "__main__":
    csv_column_stats()
    linear_regression_fit()
    join_customers_orders()
    group_median_iqr()
    log_errors_by_hour()
    classify_three_species()
    print("data written under", ROOT)
