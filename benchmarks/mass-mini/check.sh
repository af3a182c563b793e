#!/usr/bin/env bash
# Sanity check of the mass-mini tasks with plain bash, no containers.
#
# For every task (a folder holding task.toml), or only the ones named as
# arguments:
#   layout  task.toml parses and has the expected keys, the required files
#           exist, there is no Dockerfile, and every data file that the
#           verifier keeps its own copy of is identical to the one in
#           environment/;
#   oracle  environment/ copied to a fresh workspace, solution/solve.sh run
#           there, then tests/test.sh: the reward must be 1;
#   nop     environment/ copied to a fresh workspace, tests/test.sh run
#           straight away: the reward must be 0.
# A test.sh that timed out or was killed by a signal counts no reward, as in
# mass: code it ran may have written a reward file before killing it.
# Prints one row per task and exits non-zero if any check fails.
#
# Usage: benchmarks/mass-mini/check.sh [--keep] [task ...]
#   --keep  leave the temporary workspaces and log folders in place

set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KEEP=0
if [ "${1:-}" = "--keep" ]; then KEEP=1; shift; fi

if [ $# -gt 0 ]; then
  TASKS=("$@")
else
  TASKS=()
  for d in "$ROOT"/*/; do
    [ -f "$d/task.toml" ] && TASKS+=("$(basename "$d")")
  done
fi

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/mass-mini-check.XXXXXX")
cleanup() { [ "$KEEP" = 1 ] || rm -rf "$SCRATCH"; }
trap cleanup EXIT

# Prints the reward a run left in folder $1: the number in reward.txt, or
# the "reward" key of reward.json (whose values must all be numbers); "none"
# if there is neither, "both" if a verifier wrote the two, "bad" if the file
# cannot be read as a reward.
read_reward() {
  local d=$1
  if [ -f "$d/reward.txt" ] && [ -f "$d/reward.json" ]; then
    echo both
  elif [ -f "$d/reward.txt" ]; then
    awk 'NR == 1 { if ($1 ~ /^-?[0-9]+(\.[0-9]+)?$/) print $1 + 0; else print "bad"; n = 1 }
         END { if (!n) print "bad" }' "$d/reward.txt"
  elif [ -f "$d/reward.json" ]; then
    python3 - "$d/reward.json" <<'PY'
import json, sys
try:
    data = json.load(open(sys.argv[1]))
    ok = isinstance(data, dict) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in data.values())
    print(float(data["reward"]) if ok else "bad")
except Exception:
    print("bad")
PY
  else
    echo none
  fi
}

reward_file() {
  if [ -f "$1/reward.txt" ]; then echo reward.txt
  elif [ -f "$1/reward.json" ]; then echo reward.json
  else echo -; fi
}

check_layout() {
  local t=$1 dir=$ROOT/$1
  python3 - "$dir" <<'PY' || return 1
import os, sys, re
d = sys.argv[1]
name = os.path.basename(d)
problems = []
if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name):
    problems.append("bad task name")
for rel in ["task.toml", "instruction.md", "environment", "tests/test.sh", "solution/solve.sh"]:
    if not os.path.exists(os.path.join(d, rel)):
        problems.append("missing " + rel)
for base, _, files in os.walk(d):
    for f in files:
        if f in ("Dockerfile", "docker-compose.yaml", "docker-compose.yml"):
            problems.append("container file " + os.path.join(base, f))
try:
    import tomllib
except ImportError:
    tomllib = None
if tomllib is not None and os.path.exists(os.path.join(d, "task.toml")):
    try:
        with open(os.path.join(d, "task.toml"), "rb") as fh:
            t = tomllib.load(fh)
        want = {
            ("version",): "1.0",
            ("verifier", "timeout_sec"): 60.0, ("agent", "timeout_sec"): 600.0,
            ("environment", "build_timeout_sec"): 60.0, ("environment", "cpus"): 1,
            ("environment", "memory_mb"): 2048, ("environment", "storage_mb"): 1024,
            ("environment", "allow_internet"): False,
        }
        for path, value in want.items():
            cur = t
            for k in path:
                cur = cur.get(k) if isinstance(cur, dict) else None
            if cur != value or type(cur) is not type(value):
                problems.append("task.toml %s = %r, want %r" % (".".join(path), cur, value))
        if "docker_image" in t.get("environment", {}):
            problems.append("task.toml names a docker_image")
        meta = t.get("metadata", {})
        if meta.get("difficulty") not in ("easy", "medium"):
            problems.append("metadata.difficulty")
        if meta.get("category") not in ("data-science", "programming", "analysis"):
            problems.append("metadata.category")
        if meta.get("author_name") != "mass" or not isinstance(meta.get("tags"), list):
            problems.append("metadata.author_name or tags")
    except Exception as exc:
        problems.append("task.toml does not parse: %s" % exc)
env = os.path.join(d, "environment")
for f in sorted(os.listdir(os.path.join(d, "tests"))):
    p = os.path.join(env, f)
    if os.path.isfile(p) and open(p, "rb").read() != open(os.path.join(d, "tests", f), "rb").read():
        problems.append("tests/%s differs from environment/%s" % (f, f))
for p in problems:
    print("  %s: %s" % (name, p), file=sys.stderr)
sys.exit(1 if problems else 0)
PY
}

# run_case TASK MODE -> sets REWARD, RFILE, SECS
run_case() {
  local t=$1 mode=$2 dir=$ROOT/$1
  local work=$SCRATCH/$t-$mode-work logs=$SCRATCH/$t-$mode-logs
  mkdir -p "$work" "$logs"
  cp -R "$dir/environment/." "$work/"
  local start end
  start=$(date +%s.%N)
  if [ "$mode" = oracle ]; then
    (cd "$work" && timeout 120 bash "$dir/solution/solve.sh") >"$logs/solve.out" 2>&1 \
      || echo "  $t: solve.sh exited non-zero (see $logs/solve.out)" >&2
  fi
  local status=0
  (cd "$work" && LOGS_DIR="$logs" TESTS_DIR="$dir/tests" WORKSPACE="$work" \
      timeout 120 bash "$dir/tests/test.sh") >"$logs/test.out" 2>&1 || status=$?
  end=$(date +%s.%N)
  SECS=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  REWARD=$(read_reward "$logs")
  # As mass does: a verifier that timed out or was killed by a signal left no
  # reward that can be trusted (code it ran may have written it, then killed it).
  if [ "$status" = 124 ] || { [ "$status" -gt 128 ] && [ "$status" -le 192 ]; }; then
    REWARD="killed($status)"
  fi
  RFILE=$(reward_file "$logs")
}

is_number() { [[ $1 =~ ^-?[0-9]+(\.[0-9]+)?$ ]]; }

FAILED=0
printf '%-24s %-7s %-12s %-7s %-7s %-7s %-5s\n' task layout reward-file oracle nop seconds ok
for t in "${TASKS[@]}"; do
  if [ ! -f "$ROOT/$t/task.toml" ]; then
    printf '%-24s %s\n' "$t" "no such task"; FAILED=1; continue
  fi
  layout=ok
  check_layout "$t" || layout=FAIL
  run_case "$t" oracle; o_reward=$REWARD; o_file=$RFILE; o_secs=$SECS
  run_case "$t" nop; n_reward=$REWARD; n_file=$RFILE; n_secs=$SECS
  status=yes
  [ "$layout" = ok ] || status=NO
  is_number "$o_reward" && awk -v r="$o_reward" 'BEGIN { exit !(r == 1) }' || status=NO
  is_number "$n_reward" && awk -v r="$n_reward" 'BEGIN { exit !(r == 0) }' || status=NO
  [ "$o_file" = "$n_file" ] || status=NO
  [ "$status" = yes ] || FAILED=1
  secs=$(awk -v a="$o_secs" -v b="$n_secs" 'BEGIN { printf "%.1f", a + b }')
  printf '%-24s %-7s %-12s %-7s %-7s %-7s %-5s\n' "$t" "$layout" "$o_file" "$o_reward" "$n_reward" "$secs" "$status"
done

if [ "$KEEP" = 1 ]; then echo "workspaces and logs kept under $SCRATCH"; fi
if [ "$FAILED" != 0 ]; then
  echo "FAILED (rerun with --keep and read the *-logs/test.out files)"
  exit 1
fi
echo "all ${#TASKS[@]} tasks passed: oracle 1, nop 0"
