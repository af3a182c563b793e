"""Runs fixed cases against the workspace's rle.py (in a child process,
tests/runner.py, whose results come back over a pipe: see isolated_run.py)
and writes the fraction passed to reward.json, once the child and every
process it started have ended."""

import ast
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import isolated_run  # noqa: E402  (run with python3 -I: the tests' folder is added by hand)

LOGS = sys.argv[1] if len(sys.argv) > 1 else "/logs/verifier"
ERR = "ValueError"

# (calls, argument, expected result or ERR)
E, D, RT = ["encode"], ["decode"], ["encode", "decode"]
CASES = [
    (E, "aaabccdddd", "3a1b2c4d"),
    (E, "", ""),
    (E, "a" * 12, "12a"),
    (E, "  x", "2 1x"),
    (E, "abc1", ERR),
    (E, "x", "1x"),
    (E, "abab", "1a1b1a1b"),
    (E, "z" * 100 + "y", "100z1y"),
    (E, "ééé\n\n", "3é2\n"),
    (E, "Aa", "1A1a"),
    (E, "!!??..", "2!2?2."),
    (E, "9", ERR),
    (E, "\t\t\t", "3\t"),
    (D, "3a1b2c4d", "aaabccdddd"),
    (D, "12a", "a" * 12),
    (D, "2é1\n", "éé\n"),
    (D, "", ""),
    (D, "2a3a", "aaaaa"),
    (D, "a", ERR),
    (D, "3", ERR),
    (D, "0a", ERR),
    (D, "03a", ERR),
    (D, "3a2", ERR),
    (D, "10x", "x" * 10),
    (D, "1 1-1 ", " - "),
    (D, "2ab", ERR),
    (D, "1a10b", "a" + "b" * 10),
    (D, "100z", "z" * 100),
    (D, "1a0b", ERR),
    (D, "3a1b01c", ERR),
    (RT, "the  quick\n\nbrown  ffox!!", "the  quick\n\nbrown  ffox!!"),
    (RT, "mississippi", "mississippi"),
    (RT, "ÅÅÅøøæ  ", "ÅÅÅøøæ  "),
    (RT, "", ""),
]


def reward_text(passed):
    total = len(CASES)
    return json.dumps({"reward": passed / total, "cases_passed": passed, "cases_total": total})


def run_cases():
    """Returns one result dict per case; cases the child never reached get None."""
    module = os.path.join(os.getcwd(), "rle.py")
    if not os.path.isfile(module):
        print("rle.py not found")
        return [None] * len(CASES)
    cases = [{"calls": c, "arg": a, "wrap": "str"} for c, a, _ in CASES]
    results, stderr, ended = isolated_run.run_child(os.path.join(HERE, "runner.py"), module, cases, 40)
    if ended != "exited with 0":
        print("runner %s: %s" % (ended, stderr))
    results = [r if isinstance(r, dict) else None for r in results[:len(CASES)]]
    return results + [None] * (len(CASES) - len(results))


def main():
    isolated_run.guard_self()
    passed = 0
    for (calls, arg, want), rec in zip(CASES, run_cases()):
        ok, got = False, None
        if rec is not None:
            if want == ERR:
                ok = rec.get("kind") == "raise" and rec.get("exc") == "ValueError"
                got = ("raised " + str(rec.get("exc"))) if rec.get("kind") == "raise" \
                    else "returned " + str(rec.get("repr"))[:200]
            elif rec.get("kind") == "ok":
                try:
                    got = ast.literal_eval(rec.get("repr"))
                    ok = isinstance(got, str) and got == want
                except Exception:
                    got = rec.get("repr")
            else:
                got = "raised " + str(rec.get("exc"))
        passed += ok
        if not ok:
            print("FAIL %s(%r): got %r, want %r" % ("/".join(calls), arg, got, want))
    print("passed %d of %d" % (passed, len(CASES)))
    isolated_run.write_reward(LOGS, "reward.json", reward_text(passed))


if __name__ == "__main__":
    main()
