#!/usr/bin/env bash
# Installs everything mass needs: Debian packages (the bubblewrap sandbox; Python 3 with the science stack that
# agents' code, task generators and graders use; chromium for the report's browser test) and the npm packages, then
# builds dist/ so `npx mass` works.
set -euo pipefail
cd "$(dirname "$0")/.."

node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
  echo "install: mass needs Node.js 20.19 or newer (found $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi

# chromium: the browser the report's tests drive (playwright-core with this executable; no browser download).
# redis-server: the episode queue's tests start their own (execution: { backend: queue }).
# util-linux: setpriv and prlimit, with which the sandbox runs agents as an unprivileged user under limits.
packages=(bubblewrap util-linux python3 python3-numpy python3-pandas python3-matplotlib python3-scipy python3-sklearn chromium redis-server)
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null 2>&1; then
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "install: installing ${missing[*]}" >&2
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
  else
    echo "install: no apt-get here; install these yourself: ${missing[*]}" >&2
  fi
fi

# Not `npm ci`: qwen-code lists clipboard binaries for other platforms as optional dependencies, some registries
# (this one) lack them, and `npm ci` then refuses the lock file; `npm install` keeps to the lock file all the same.
npm install --no-audit --no-fund
# The agent harness's own Node 22 (qwen-code declares it), in a folder of its own and without bin links, so that it
# never shadows the `node` of the npm scripts (better-sqlite3 is built for this one). Only for Linux x64; elsewhere
# the harness runs on this Node.
if [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ]; then
  npm install --prefix harness-node --no-bin-links --no-audit --no-fund
fi
