"""Runs one task's reference solution in several workspaces, one after another, in this one Python.

    python3 run_variants.py '[{"workspace": "<dir>", "args": ["--careless"]}, ...]'

Each run is what `python3 run.py <args>` in that workspace does: the workspace is the working directory and the first
entry of sys.path, and run.py runs as __main__. The heavy libraries (numpy, pandas, scipy, matplotlib) are imported
once, by the first run, instead of once a run; the workspace's own modules (refkit, a task's simulator) are imported
afresh by each, since they read the working directory when imported. The grading tests use it so that a task's
careful, careless and trap runs cost one interpreter's start, not one each.

Prints one JSON line of each run's outcome ({"workspace", "ok", "error"}); exits 1 if any run failed.
"""

import json
import os
import runpy
import sys
import traceback

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def forget_modules_under(folder):
    prefix = os.path.join(os.path.realpath(folder), "")
    for name, module in list(sys.modules.items()):
        source = getattr(module, "__file__", None)
        if source and os.path.realpath(source).startswith(prefix):
            del sys.modules[name]


def run_one(workspace, args):
    os.chdir(workspace)
    sys.argv = ["run.py", *args]
    sys.path.insert(0, workspace)
    try:
        runpy.run_path(os.path.join(workspace, "run.py"), run_name="__main__")
        return None
    except SystemExit as stop:
        return None if stop.code in (None, 0) else f"exited with {stop.code}"
    except Exception:  # noqa: BLE001 - reported for this run, the next one still runs
        return traceback.format_exc()
    finally:
        plt.close("all")
        sys.path.remove(workspace)
        forget_modules_under(workspace)


def main():
    outcomes = []
    for run in json.loads(sys.argv[1]):
        error = run_one(run["workspace"], run["args"])
        if error:
            print(f"{run['workspace']} {' '.join(run['args'])}: {error}", file=sys.stderr)
        outcomes.append({"workspace": run["workspace"], "ok": error is None, "error": error})
    print(json.dumps(outcomes))
    return 0 if all(outcome["ok"] for outcome in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
