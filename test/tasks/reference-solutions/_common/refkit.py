"""Helpers shared by the reference solutions (copied next to run.py in the workspace)."""

import json
import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(os.getcwd())
RESULTS = ROOT / "results"
PLOTS = ROOT / "deliverables" / "plots"


MODE_FILE = ROOT / ".reference-mode.json"


def fallen_traps(known):
    """The traps this run falls into: none by default, every one of `known` with `--careless`, one with `--trap <name>`.

    The choice is kept in .reference-mode.json, so a plain `python3 run.py` in a copy of the workspace (the grader's
    reproducibility rerun) falls into the same traps and reproduces the same files."""
    args = sys.argv[1:]
    if "--careless" in args:
        fallen = sorted(known)
    elif "--trap" in args:
        index = args.index("--trap") + 1
        name = args[index] if index < len(args) else ""
        if name not in known:
            raise SystemExit(f"--trap {name!r}: this task's traps are {', '.join(sorted(known))}")
        fallen = [name]
    elif MODE_FILE.is_file():
        return set(json.loads(MODE_FILE.read_text())["traps"])
    else:
        fallen = []
    if fallen:
        MODE_FILE.write_text(json.dumps({"traps": fallen}) + "\n")
    return set(fallen)


def prepare():
    RESULTS.mkdir(parents=True, exist_ok=True)
    PLOTS.mkdir(parents=True, exist_ok=True)


def save_json(name, value):
    (RESULTS / name).write_text(json.dumps(value, indent=2, allow_nan=False) + "\n")


def figure(title, xlabel, ylabel):
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=80)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    return fig, ax


def save_plot(fig, name):
    fig.tight_layout()
    fig.savefig(PLOTS / name)
    plt.close(fig)


def write_report(title, sections):
    """sections: list of (heading, paragraph text)."""
    lines = [f"# {title}", ""]
    for heading, text in sections:
        lines += [f"## {heading}", "", text.strip(), ""]
    (ROOT / "research_report.md").write_text("\n".join(lines))


def table(rows, header):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(out)
