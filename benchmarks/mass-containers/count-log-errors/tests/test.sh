#!/usr/bin/env bash
# Verifier for count-log-errors: the count must match the log the image holds.
LOGS=${LOGS_DIR:-/logs/verifier}
mkdir -p "$LOGS"
echo 0 > "$LOGS/reward.txt"
expected=$(awk '$3 == "ERROR"' /app/service.log | wc -l)
if [ -f /app/make-extra.sh ] || [ -d /build ]; then echo "the build-only script is in the image"; exit 0; fi
got=$(tr -d '[:space:]' < /app/error-count.txt 2>/dev/null || true)
echo "expected $expected, found '${got}'"
[ "$got" = "$expected" ] && echo 1 > "$LOGS/reward.txt"
exit 0
