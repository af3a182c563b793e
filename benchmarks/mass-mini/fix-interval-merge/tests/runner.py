"""Child process of check.py: imports a module from the workspace and runs
the cases it is given, one JSON line per case on its standard output (a pipe
to check.py), so that code under test never runs inside the process that
writes the reward (see isolated_run.py). Whatever the module prints goes to
standard error, never among the results.

Usage: python3 -I runner.py MODULE_FILE CASES_JSON

A case is {"calls": [function names], "arg": value, "wrap": "str" | "list" |
"iter" | "tuple"}: the first function gets the wrapped argument and each
next one the previous result. A line of output is {"kind": "ok" | "raise",
"exc": exception name, "repr": repr of the result, "mutated": bool}.
"""

import importlib.util
import json
import os
import signal
import sys


class Timeout(Exception):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def wrap(arg, how):
    if how == "str":
        return arg
    items = [tuple(p) for p in arg]
    if how == "iter":
        return iter(items)
    if how == "tuple":
        return tuple(items)
    return items


def main():
    module_file, cases_file = sys.argv[1:3]
    with open(cases_file) as fh:
        cases = json.load(fh)
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.path.append(os.path.dirname(os.path.abspath(module_file)))
    spec = importlib.util.spec_from_file_location("module_under_test", module_file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    signal.signal(signal.SIGALRM, on_alarm)
    for case in cases:
        arg = wrap(case["arg"], case["wrap"])
        before = list(arg) if isinstance(arg, list) else None
        rec = {"kind": "ok", "exc": None, "repr": None, "mutated": False}
        signal.alarm(2)
        try:
            value = arg
            for name in case["calls"]:
                value = getattr(mod, name)(value)
            rec["repr"] = repr(value)[:100000]
        except Timeout:
            rec["kind"], rec["exc"] = "raise", "Timeout"
        except BaseException as exc:
            rec["kind"], rec["exc"] = "raise", type(exc).__name__
        finally:
            signal.alarm(0)
        if before is not None and arg != before:
            rec["mutated"] = True
        out.write(json.dumps(rec) + "\n")
        out.flush()
    out.close()


if __name__ == "__main__":
    main()
