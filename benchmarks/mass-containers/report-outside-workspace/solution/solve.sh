#!/usr/bin/env bash
set -euo pipefail
wc -l < words.txt > /srv/report/line-count.txt
