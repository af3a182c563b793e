#!/usr/bin/env bash
# Verifier for greeting-from-env: the verifier gets the task's environment too.
LOGS=${LOGS_DIR:-/logs/verifier}
mkdir -p "$LOGS"
echo 0 > "$LOGS/reward.txt"
[ "${GREETING_NAME:-}" = Ada ] || { echo "GREETING_NAME is not set for the verifier"; exit 1; }
got=$(cat /app/greeting.txt 2>/dev/null || true)
echo "found '$got'"
[ "$got" = "Good day, Ada." ] && echo 1 > "$LOGS/reward.txt"
exit 0
