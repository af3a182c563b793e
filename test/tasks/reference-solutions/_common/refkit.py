"""Helpers shared by the reference solutions (copied next to run.py in the workspace)."""

import json
import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(os.getcwd())
RESULTS = ROOT / "results"
PLOTS = ROOT / "deliverables" / "plots"


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
