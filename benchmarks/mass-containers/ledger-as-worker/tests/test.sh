#!/usr/bin/env bash
# Verifier for ledger-as-worker: runs as root (the expected total is readable by root alone), and checks that the
# ledger was written by the agent's user, outside the working folder.
LOGS=${LOGS_DIR:-/logs/verifier}
mkdir -p "$LOGS"
echo 0 > "$LOGS/reward.txt"
expected=$(cat /root/expected-total) || { echo "cannot read /root/expected-total: not root?"; exit 1; }
got=$(tr -d '[:space:]' < /srv/ledger/total.txt 2>/dev/null || true)
owner=$(stat -c %U /srv/ledger/total.txt 2>/dev/null || true)
echo "expected $expected, found '${got}' written by '${owner}'"
[ "$got" = "$expected" ] && [ "$owner" = worker ] && echo 1 > "$LOGS/reward.txt"
exit 0
