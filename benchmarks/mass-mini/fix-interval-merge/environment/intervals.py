"""Helpers for working with closed numeric intervals."""


def merge_intervals(intervals):
    """Merge overlapping intervals.

    Returns a list of (start, end) tuples.
    """
    if not intervals:
        return []
    intervals.sort()
    merged = [intervals[0]]
    for start, end in intervals[1:]:
        last_start, last_end = merged[-1]
        if start < last_end:
            merged[-1] = (last_start, end)
        else:
            merged.append((start, end))
    return merged


def total_length(intervals):
    """Total length covered by the intervals."""
    return sum(end - start for start, end in intervals)
