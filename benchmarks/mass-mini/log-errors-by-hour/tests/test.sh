#!/usr/bin/env bash
# Verifier for log-errors-by-hour: reward.txt, 1 or 0.
LOGS=${LOGS_DIR:-/logs/verifier}
TESTS=${TESTS_DIR:-/tests}
mkdir -p "$LOGS"
echo 0 > "$LOGS/reward.txt"
cd "${WORKSPACE:-$PWD}" || exit 0
LIMIT=""
command -v timeout >/dev/null 2>&1 && LIMIT="timeout 50"
$LIMIT python3 "$TESTS/check.py" "$LOGS" || echo "check.py failed; reward stays 0"
exit 0
