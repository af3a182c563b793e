#!/usr/bin/env bash
# Verifier for implement-rle: partial credit, written to reward.json.
# check.py runs the agent's code in a child process and alone writes the
# reward, once that child and all it started have ended (isolated_run.py).
# exec: no shell is left behind for the agent's code to signal, and bash
# never reads this file again, so rewriting it changes nothing. A verifier
# killed by the agent's code ends by a signal: no reward is trusted then.
main() {
  local logs=${LOGS_DIR:-/logs/verifier} tests=${TESTS_DIR:-/tests}
  mkdir -p "$logs" || exit 1
  cd "${WORKSPACE:-$PWD}" || exit 1
  exec python3 -I "$tests/check.py" "$logs"
}
main "$@"
