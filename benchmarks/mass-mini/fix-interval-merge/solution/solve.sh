#!/usr/bin/env bash
# Reference solution for fix-interval-merge: rewrite the module to the spec.
set -euo pipefail
cat > intervals.py <<'PY'
"""Helpers for working with closed numeric intervals."""


def merge_intervals(intervals):
    """Merge overlapping or touching closed intervals.

    Returns a new list of (start, end) tuples sorted by start.
    Raises ValueError if some interval has start > end.
    """
    items = [(start, end) for start, end in intervals]
    for start, end in items:
        if start > end:
            raise ValueError("interval (%r, %r) has start > end" % (start, end))
    merged = []
    for start, end in sorted(items):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def total_length(intervals):
    """Total length covered by the union of the intervals."""
    return sum(end - start for start, end in merge_intervals(intervals))
PY
