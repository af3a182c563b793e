# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Shared generator helpers for the research-12 suite (withheld: the generators hold the planted truth).

Determinism: every random draw comes from `stream(seed, name)`, and every file is written with fixed formatting,
so the same seed gives the same bytes on any machine with the same numpy.
"""

import argparse
import hashlib
import json
from pathlib import Path

import numpy as np


def stream(seed, name):
    """An independent generator per (seed, purpose): adding a draw to one stream never shifts another."""
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big")
    return np.random.default_rng([int(seed), key])


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", required=True, help="folder to write the task's input data into")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return args.seed, out


def fmt(value, digits):
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, str):
        return value
    text = f"{float(value):.{digits}f}"
    return "0." + "0" * digits if text == "-0." + "0" * digits else text


def write_csv(path, header, columns, digits=6):
    """Columns (equal-length sequences) to CSV with fixed decimals; `digits` may be a dict per column."""
    n = len(columns[0])
    lines = [",".join(header)]
    for i in range(n):
        cells = []
        for name, column in zip(header, columns):
            d = digits.get(name, 6) if isinstance(digits, dict) else digits
            cells.append(fmt(column[i], d))
        lines.append(",".join(cells))
    Path(path).write_text("\n".join(lines) + "\n")


def write_json(path, value):
    Path(path).write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")


def business_dates(start, count):
    days = np.busday_offset(np.datetime64(start, "D"), np.arange(count), roll="forward")
    return [str(day) for day in days]
