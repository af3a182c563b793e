#!/usr/bin/env bash
set -euo pipefail
awk '$3 == "ERROR"' /app/service.log | wc -l > /app/error-count.txt
