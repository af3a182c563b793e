#!/usr/bin/env bash
set -euo pipefail
if [ "$GREETING_STYLE" = formal ]; then echo "Good day, $GREETING_NAME." > /app/greeting.txt
else echo "Hi $GREETING_NAME!" > /app/greeting.txt; fi
