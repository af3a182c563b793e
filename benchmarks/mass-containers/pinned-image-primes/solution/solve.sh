#!/usr/bin/env bash
set -euo pipefail
cat > /app/primes.py <<'PY'
found = []
candidate = 2
while len(found) < 15:
    if all(candidate % p for p in found):
        found.append(candidate)
    candidate += 1
print("\n".join(map(str, found)))
PY
