#!/usr/bin/env bash
# Verifier for report-outside-workspace: reads what the agent left outside its working folder.
LOGS=${LOGS_DIR:-/logs/verifier}
mkdir -p "$LOGS"
echo 0 > "$LOGS/reward.txt"
expected=$(wc -l < "${WORKSPACE:-/workspace}/words.txt")
got=$(tr -d '[:space:]' < /srv/report/line-count.txt 2>/dev/null || true)
echo "expected $expected, found '${got}'"
[ "$got" = "$expected" ] && echo 1 > "$LOGS/reward.txt"
exit 0
