#!/usr/bin/env bash
# Verifier for pinned-image-primes: runs the agent's program with the image's Python.
LOGS=${LOGS_DIR:-/logs/verifier}
mkdir -p "$LOGS"
echo 0 > "$LOGS/reward.txt"
expected="2 3 5 7 11 13 17 19 23 29 31 37 41 43 47"
got=$(timeout 20 python3 /app/primes.py 2>&1 | tr '\n' ' ' | sed 's/ *$//')
echo "expected '$expected', found '$got'"
[ "$got" = "$expected" ] && echo 1 > "$LOGS/reward.txt"
exit 0
