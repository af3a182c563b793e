"""Checks the workspace's intervals.py against the specification: the
examples in the instruction, then seeded random cases compared with a
reference implementation. The module runs in a child process
(tests/runner.py) whose results come back over a pipe (see isolated_run.py);
the reward is written once the child and every process it started have
ended. Reward 1 only if every case passes."""

import ast
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import isolated_run  # noqa: E402  (run with python3 -I: the tests' folder is added by hand)
LOGS = sys.argv[1] if len(sys.argv) > 1 else "/logs/verifier"


def ref_merge(intervals):
    items = [tuple(p) for p in intervals]
    for s, e in items:
        if s > e:
            raise ValueError
    out = []
    for s, e in sorted(items):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def ref_total(intervals):
    return sum(e - s for s, e in ref_merge(intervals))


def build_cases():
    stated = [
        [(1, 3), (2, 6), (8, 10), (15, 18)],
        [(5, 7), (1, 2)],
        [(1, 4), (4, 5)],
        [(1, 10), (2, 3)],
        [(3, 3)],
        [],
        [(2, 1)],
        [(1, 3), (2, 6)],
    ]
    cases = []
    for arg in stated:
        cases.append(("merge_intervals", arg, "list"))
        cases.append(("total_length", arg, "list"))
    cases.append(("merge_intervals", [(0.5, 1.5), (1.0, 2.0)], "iter"))
    cases.append(("merge_intervals", [(1, 2), (2, 3)], "tuple"))
    cases.append(("total_length", [(0, 2), (1, 5)], "iter"))
    rng = random.Random(7)
    for i in range(300):
        arg = []
        for _ in range(rng.randrange(0, 9)):
            s = rng.randrange(0, 30)
            e = s + rng.choice([0, 0, 1, 2, 3, 5, 8, 13])
            if rng.random() < 0.3:
                s, e = s + 0.5, e + 0.5
            arg.append((s, e))
        if i % 50 == 49 and arg:
            k = rng.randrange(len(arg))
            arg[k] = (arg[k][1] + 1, arg[k][0])
        cases.append(("merge_intervals", arg, "list"))
        cases.append(("total_length", arg, "list"))
    return cases


def run_cases(cases):
    module = os.path.join(os.getcwd(), "intervals.py")
    if not os.path.isfile(module):
        print("intervals.py not found")
        return [None] * len(cases)
    given = [{"calls": [fn], "arg": arg, "wrap": how} for fn, arg, how in cases]
    results, stderr, ended = isolated_run.run_child(os.path.join(HERE, "runner.py"), module, given, 40)
    if ended != "exited with 0":
        print("runner %s: %s" % (ended, stderr))
    results = [r if isinstance(r, dict) else None for r in results[:len(cases)]]
    return results + [None] * (len(cases) - len(results))


def judge(fn, arg, rec):
    """Returns None when the result meets the specification, else a message."""
    if rec is None:
        return "no result"
    try:
        want = ref_merge(arg) if fn == "merge_intervals" else ref_total(arg)
    except ValueError:
        if rec.get("kind") == "raise" and rec.get("exc") == "ValueError":
            return None
        return "expected ValueError, got %s %s" % (rec.get("kind"), rec.get("exc") or rec.get("repr"))
    if rec.get("kind") != "ok":
        return "raised %s, want %r" % (rec.get("exc"), want)
    if rec.get("mutated"):
        return "modified its argument"
    try:
        got = ast.literal_eval(rec.get("repr"))
    except Exception:
        return "returned %s, want %r" % (str(rec.get("repr"))[:200], want)
    if fn == "merge_intervals":
        if not isinstance(got, list) or not all(isinstance(x, tuple) for x in got) or got != want:
            return "returned %r, want %r (a list of tuples)" % (got, want)
        return None
    if isinstance(got, bool) or not isinstance(got, (int, float)) or abs(got - want) > 1e-9 * max(1.0, abs(want)):
        return "returned %r, want %r" % (got, want)
    return None


def main():
    isolated_run.guard_self()
    cases = build_cases()
    failures = []
    for (fn, arg, how), rec in zip(cases, run_cases(cases)):
        problem = judge(fn, arg, rec)
        if problem:
            failures.append("%s(%s %r): %s" % (fn, how, arg, problem))
    for f in failures[:15]:
        print(f)
    print("%d of %d cases failed" % (len(failures), len(cases)))
    isolated_run.write_reward(LOGS, "reward.txt", "0\n" if failures else "1\n")


if __name__ == "__main__":
    main()
