#!/usr/bin/env bash
# Build-only: appends generated lines to the log, then the Dockerfile deletes this script.
for i in $(seq 1 40); do
  if [ $((i % 7)) -eq 0 ]; then echo "2024-05-0$((i % 9 + 1)) 12:00:$((i % 60)) ERROR worker-$i lost its lease"
  else echo "2024-05-0$((i % 9 + 1)) 12:00:$((i % 60)) INFO worker-$i heartbeat"; fi
done
