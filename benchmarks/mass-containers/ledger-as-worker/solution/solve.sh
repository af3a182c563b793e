#!/usr/bin/env bash
set -euo pipefail
awk -F, 'NR > 1 { total += $2 } END { print total }' /app/entries.csv > /srv/ledger/total.txt
