#!/usr/bin/env bash
# Reference solution for implement-rle.
set -euo pipefail
cat > rle.py <<'PY'
"""Run-length encoding of text. See the task description for the format."""

DIGITS = "0123456789"


def encode(text):
    if any(ch in DIGITS for ch in text):
        raise ValueError("text contains an ASCII digit")
    out = []
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and text[j] == text[i]:
            j += 1
        out.append("%d%s" % (j - i, text[i]))
        i = j
    return "".join(out)


def decode(code):
    out = []
    i = 0
    while i < len(code):
        j = i
        while j < len(code) and code[j] in DIGITS:
            j += 1
        digits = code[i:j]
        if not digits:
            raise ValueError("token at %d has no count" % i)
        if digits[0] == "0":
            raise ValueError("count %r is zero or has a leading zero" % digits)
        if j >= len(code):
            raise ValueError("count %r has no character" % digits)
        out.append(code[j] * int(digits))
        i = j + 1
    return "".join(out)
PY
