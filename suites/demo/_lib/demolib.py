# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Shared generator and grading helpers of the demo suite.

Generators draw every random number from `stream(seed, name)` and write with fixed formatting, so the same seed gives
the same bytes. A grader registers parts (score in [0, 1] and a reason) and prints one grade per `--workspace`:
one JSON object for one workspace, a list for several. A part that cannot be computed scores 0 with its reason.
"""

import argparse
import hashlib
import json
import math
from pathlib import Path

import numpy as np

GRADE_SCHEMA_VERSION = 1


def stream(seed, name):
    """An independent generator per (seed, purpose)."""
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big")
    return np.random.default_rng([int(seed), key])


def generator_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", required=True, help="folder to write the task's input data into")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return args.seed, out


def write_csv(path, header, rows):
    """Rows of already formatted cells."""
    lines = [",".join(header)] + [",".join(row) for row in rows]
    Path(path).write_text("\n".join(lines) + "\n")


class Fail(Exception):
    """Raised inside a part: the part scores 0 and the message is its reason."""


def linear(value, best, worst):
    """1 at `best`, 0 at `worst`, linear in between, clamped."""
    if value is None or not math.isfinite(value):
        return 0.0
    return max(0.0, min(1.0, (value - worst) / (best - worst)))


def read_json_object(root, rel):
    target = Path(root) / rel
    if not target.is_file():
        raise Fail(f"{rel} is missing")
    try:
        value = json.loads(target.read_text(), parse_constant=lambda name: float("nan"))
    except ValueError as error:
        raise Fail(f"{rel} is not valid JSON: {error}")
    if not isinstance(value, dict):
        raise Fail(f"{rel} is not a JSON object")
    return value


def number(mapping, key, rel):
    value = mapping.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise Fail(f'{rel}: "{key}" is not a finite number')
    return float(value)


def deliverable_score(root, deliverable):
    """(score in [0, 1], problem or None) for one deliverable of the manifest; only the kinds the demo uses."""
    rel = deliverable["path"]
    target = Path(root) / rel
    if not target.is_file() or target.stat().st_size == 0:
        return 0.0, f"{rel} missing or empty"
    if deliverable["kind"] == "report":
        text = target.read_text(errors="replace")
        words = len(text.split())
        headings = [line.lstrip("#").strip().lower() for line in text.splitlines() if line.startswith("#")]
        sections = deliverable.get("requiredSections", [])
        found = [s for s in sections if any(s.lower() in heading for heading in headings)]
        minimum = deliverable.get("minWords", 300)
        score = 0.5 * min(1.0, words / max(1, minimum)) + 0.5 * (len(found) / len(sections) if sections else 1.0)
        return score, None if score >= 1.0 else f"{rel}: {words} words, {len(found)} of {len(sections)} sections"
    if deliverable["kind"] == "metrics-json":
        try:
            value = read_json_object(root, rel)
        except Fail as failure:
            return 0.0, str(failure)
        required = deliverable.get("requiredKeys", [])
        bad = [key for key in required if isinstance(value.get(key), bool) or not isinstance(value.get(key), (int, float))]
        return 1 - len(bad) / max(1, len(required)), f"{rel} lacks {', '.join(bad)}" if bad else None
    return 1.0, None


class Grader:
    def __init__(self, task_id):
        parser = argparse.ArgumentParser(description=f"Grade finished workspaces of task {task_id}.")
        parser.add_argument("--workspace", action="append", required=True)
        parser.add_argument("--seed", type=int, required=True)
        parser.add_argument("--task-dir", required=True)
        parser.add_argument("--manifest")
        args = parser.parse_args()
        self.task_id = task_id
        self.seed = args.seed
        self.roots = args.workspace
        self.manifest = json.loads(Path(args.manifest).read_text()) if args.manifest else {}
        self.parts = []

    def part(self, name, weight):
        """Decorator: a part is a function of the workspace root returning (score, reason)."""

        def register(function):
            self.parts.append((name, float(weight), function))
            return function

        return register

    def deliverables(self, weight):
        @self.part("deliverables", weight)
        def _(root):
            deliverables = self.manifest.get("deliverables", [])
            if not deliverables:
                raise Fail("no deliverables in the manifest passed to the grader (--manifest)")
            scored = [deliverable_score(root, deliverable) for deliverable in deliverables]
            problems = [problem for _, problem in scored if problem]
            reason = "; ".join(problems) or f"all {len(scored)} deliverables present and valid"
            return sum(score for score, _ in scored) / len(scored), reason

    def _grade(self, root):
        parts = []
        for name, weight, function in self.parts:
            try:
                score, reason = function(root)
            except Fail as failure:
                score, reason = 0.0, str(failure)
            except Exception as error:  # a garbage workspace never crashes the grader
                score, reason = 0.0, f"grader error: {type(error).__name__}: {error}"
            score = 0.0 if score is None or not math.isfinite(score) else max(0.0, min(1.0, float(score)))
            parts.append({"name": name, "weight": weight, "score": round(score, 4), "reason": str(reason)})
        total = sum(part["weight"] for part in parts)
        points = 100.0 * sum(part["weight"] * part["score"] for part in parts) / total if total else 0.0
        return {
            "schemaVersion": GRADE_SCHEMA_VERSION,
            "task": self.task_id,
            "seed": self.seed,
            "score": round(points, 2),
            "parts": parts,
            "capsApplied": [],
        }

    def emit(self):
        grades = [self._grade(root) for root in self.roots]
        print(json.dumps(grades[0] if len(grades) == 1 else grades, indent=2))
