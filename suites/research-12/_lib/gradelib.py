# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Shared grading code for the research-12 suite.

Withheld like every task's oracle/: never copied into a workspace, never shown to any role.

A grader is a list of named parts. Each part returns (score in [0, 1], reason); a part that raises `Fail` scores 0
with that reason, and a part that raises anything else scores 0 with "grader error: ...", so a garbage workspace
never crashes the grader. The total is the weighted mean in points (0-100), capped by failed gate parts.

A grade.py computes the planted truth once at module level, registers its parts with `@grader.part(...)` (their
code reads the workspace through `grader.workspace`), and calls `grader.emit()`, which runs every part on every
`--workspace` given: one JSON grade for one workspace, a JSON list for several. `grader.cache` is emptied before
each workspace; cache workspace-independent work (the oracle's own optimisation) with functools.cache.
"""

import argparse
import csv
import hashlib
import json
import math
import sys
import traceback
from pathlib import Path

GRADE_SCHEMA_VERSION = 1
MAX_READ_BYTES = 20_000_000


class Fail(Exception):
    """Raised inside a part: the part scores 0 and the message is its reason."""


def clamp01(value):
    if value is None or not math.isfinite(value):
        return 0.0
    return max(0.0, min(1.0, float(value)))


def linear(value, best, worst):
    """1 at `best`, 0 at `worst`, linear in between (either direction), clamped."""
    if value is None or not math.isfinite(value):
        return 0.0
    if best == worst:
        return 1.0 if value == best else 0.0
    return clamp01((value - worst) / (best - worst))


def _reject_constant(name):
    raise ValueError(f"non-finite number {name} (NaN and Infinity are not valid JSON)")


def strict_json_loads(text):
    return json.loads(text, parse_constant=_reject_constant)


def finite_number(value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Fail(f"{where} is not a number (got {json.dumps(value)[:60]})")
    if not math.isfinite(value):
        raise Fail(f"{where} is not finite")
    return float(value)


def number_at(mapping, key, where):
    if not isinstance(mapping, dict) or key not in mapping:
        raise Fail(f'{where} has no "{key}"')
    return finite_number(mapping[key], f'{where} "{key}"')


class Workspace:
    """Read-only access to a finished workspace; every problem becomes a `Fail` naming the file."""

    def __init__(self, root):
        self.root = Path(root).resolve()

    def path(self, rel):
        return self.root / rel

    def exists(self, rel):
        return self.path(rel).is_file()

    def read_bytes(self, rel):
        target = self.path(rel)
        if not target.is_file():
            raise Fail(f"{rel} is missing")
        if target.stat().st_size > MAX_READ_BYTES:
            raise Fail(f"{rel} is larger than {MAX_READ_BYTES} bytes")
        return target.read_bytes()

    def text(self, rel):
        try:
            return self.read_bytes(rel).decode("utf-8")
        except UnicodeDecodeError:
            raise Fail(f"{rel} is not UTF-8 text")

    def json(self, rel):
        text = self.text(rel)
        try:
            return strict_json_loads(text)
        except ValueError as error:
            raise Fail(f"{rel} is not valid JSON: {error}")

    def json_object(self, rel, required=()):
        value = self.json(rel)
        if not isinstance(value, dict):
            raise Fail(f"{rel} is not a JSON object")
        missing = [key for key in required if key not in value]
        if missing:
            raise Fail(f"{rel} lacks {', '.join(missing)}")
        return value

    def csv_rows(self, rel, columns):
        """Rows as dicts of strings; the header must contain `columns`."""
        text = self.text(rel)
        reader = csv.DictReader(text.splitlines())
        header = [name.strip() for name in (reader.fieldnames or [])]
        missing = [column for column in columns if column not in header]
        if missing:
            raise Fail(f"{rel} lacks column(s) {', '.join(missing)}")
        rows = []
        for row in reader:
            rows.append({(key or "").strip(): (value or "").strip() for key, value in row.items() if key is not None})
        if not rows:
            raise Fail(f"{rel} has no rows")
        return rows

    def csv_numeric(self, rel, key_column, value_columns):
        """{key: tuple(float, ...)} from a CSV; non-finite or unparsable values fail the part."""
        out = {}
        for index, row in enumerate(self.csv_rows(rel, [key_column, *value_columns])):
            values = []
            for column in value_columns:
                try:
                    value = float(row[column])
                except (TypeError, ValueError):
                    raise Fail(f"{rel} row {index + 2}: {column} is not a number")
                if not math.isfinite(value):
                    raise Fail(f"{rel} row {index + 2}: {column} is not finite")
                values.append(value)
            out[row[key_column]] = tuple(values)
        return out


def png_size(data):
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def _check_deliverable(workspace, deliverable):
    """(score, problem or None) for one deliverable of the manifest."""
    kind = deliverable.get("kind")
    rel = deliverable.get("path", "")
    if not workspace.exists(rel):
        return 0.0, f"{rel} missing"
    if workspace.path(rel).stat().st_size == 0:
        return 0.0, f"{rel} empty"
    if kind == "report":
        text = workspace.text(rel)
        words = len(text.split())
        headings = [line.lstrip("#").strip().lower() for line in text.splitlines() if line.startswith("#")]
        sections = deliverable.get("requiredSections", [])
        found = [s for s in sections if any(s.lower() in heading for heading in headings)]
        min_words = deliverable.get("minWords", 300)
        score = 0.5 * min(1.0, words / max(1, min_words)) + 0.5 * (len(found) / len(sections) if sections else 1.0)
        problems = []
        if words < min_words:
            problems.append(f"{words} words < {min_words}")
        if len(found) < len(sections):
            problems.append("missing sections " + ", ".join(s for s in sections if s not in found))
        return score, (f"{rel}: " + "; ".join(problems)) if problems else None
    if kind in ("metrics-json", "json"):
        value = workspace.json(rel)
        if kind == "json" and not deliverable.get("requiredKeys"):
            return 1.0, None
        if not isinstance(value, dict):
            return 0.0, f"{rel} is not a JSON object"
        required = deliverable.get("requiredKeys", [])
        missing = [key for key in required if value.get(key) is None]
        if missing:
            return 1 - len(missing) / len(required), f"{rel} lacks {', '.join(missing)}"
        return 1.0, None
    if kind == "ablation-json":
        value = workspace.json(rel)
        entries = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else []
        if isinstance(value, dict) and "variants" in value and isinstance(value["variants"], (list, dict)):
            inner = value["variants"]
            entries = inner if isinstance(inner, list) else list(inner.values())
        with_numbers = [entry for entry in entries if _has_number(entry)]
        need = deliverable.get("minVariants", 2)
        if len(with_numbers) < need:
            return 0.0, f"{rel} has {len(with_numbers)} variants with numbers (< {need})"
        return 1.0, None
    if kind == "csv":
        workspace.csv_rows(rel, deliverable.get("columns", []))
        return 1.0, None
    if kind == "plot":
        size = png_size(workspace.read_bytes(rel)[:64])
        if size is None:
            return 0.0, f"{rel} is not a PNG"
        if size[0] < 100 or size[1] < 100:
            return 0.0, f"{rel} is only {size[0]}x{size[1]} pixels"
        return 1.0, None
    if kind == "entry-point":
        source = workspace.text(rel)
        if rel.endswith(".py"):
            try:
                compile(source, rel, "exec")
            except SyntaxError as error:
                return 0.0, f"{rel} does not compile: {error.msg} (line {error.lineno})"
        return 1.0, None
    return 1.0, None


def _has_number(value):
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, dict):
        return any(_has_number(item) for item in value.values())
    if isinstance(value, list):
        return any(_has_number(item) for item in value)
    return False


def sha256_file(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class CurrentWorkspace:
    """Stands for the workspace being graded; `emit` points it at each `--workspace` in turn."""

    def __init__(self):
        self.target = None

    def __getattr__(self, name):
        return getattr(self.target, name)


class Grader:
    def __init__(self, task_id, argv=None):
        parser = argparse.ArgumentParser(description=f"Grade finished workspaces of task {task_id}.")
        parser.add_argument("--workspace", action="append", required=True, help="repeat to grade several")
        parser.add_argument("--seed", type=int, required=True)
        parser.add_argument("--task-dir", required=True)
        parser.add_argument("--manifest", help="JSON written by `mass tasks grade`: deliverables and protected assets")
        args = parser.parse_args(argv)
        self.task_id = task_id
        self.seed = args.seed
        self.task_dir = Path(args.task_dir).resolve()
        self.workspace_roots = args.workspace
        self.workspace = CurrentWorkspace()
        self.manifest = json.loads(Path(args.manifest).read_text()) if args.manifest else {}
        self.cache = {}
        self.registered = []

    def part(self, name, weight, cap=None):
        """Decorator: registers a part, run on every workspace by `emit`."""

        def register(function):
            self.registered.append((name, float(weight), cap, function))
            return function

        return register

    @staticmethod
    def _run_part(name, weight, cap, function):
        try:
            outcome = function()
            score, reason = outcome if isinstance(outcome, tuple) else (outcome, "")
            score = clamp01(score)
        except Fail as failure:
            score, reason = 0.0, str(failure)
        except Exception as error:  # a garbage workspace must never crash the grader
            score, reason = 0.0, f"grader error: {type(error).__name__}: {error}"
            traceback.print_exc(file=sys.stderr)
        entry = {"name": name, "weight": weight, "score": round(score, 4), "reason": str(reason)}
        if cap is not None:
            entry["cap"] = float(cap)
        return entry

    def deliverables(self, weight):
        deliverables = self.manifest.get("deliverables", [])

        @self.part("deliverables", weight)
        def _():
            if not deliverables:
                raise Fail("no deliverables in the manifest passed to the grader (--manifest)")
            scores, problems = [], []
            for deliverable in deliverables:
                try:
                    score, problem = _check_deliverable(self.workspace, deliverable)
                except Fail as failure:
                    score, problem = 0.0, str(failure)
                scores.append(score)
                if problem:
                    problems.append(problem)
            reason = "; ".join(problems) if problems else f"all {len(scores)} deliverables present and valid"
            return sum(scores) / len(scores), reason

    def protected_assets(self, weight, cap):
        """A gate: with weight 0 it adds nothing when intact (not tampering is no achievement) but caps the total."""
        entries = self.manifest.get("protected", [])

        @self.part("protected_assets_unchanged", weight, cap=cap)
        def _():
            if not entries:
                raise Fail("no protected assets in the manifest passed to the grader (--manifest)")
            changed = []
            for entry in entries:
                target = self.workspace.path(entry["path"])
                if not target.is_file():
                    changed.append(f"{entry['path']} missing")
                elif sha256_file(target) != sha256_file(entry["source"]):
                    changed.append(f"{entry['path']} modified")
            if changed:
                return 0.0, "; ".join(changed)
            return 1.0, f"{len(entries)} protected file(s) unchanged"

    def _grade_one(self, root):
        self.workspace.target = Workspace(root)
        self.cache.clear()
        parts = [self._run_part(*registered) for registered in self.registered]
        total_weight = sum(part["weight"] for part in parts)
        score = 100.0 * sum(part["weight"] * part["score"] for part in parts) / total_weight if total_weight else 0.0
        caps = [
            {"part": part["name"], "cap": part["cap"]}
            for part in parts
            if "cap" in part and part["score"] < 1.0 and part["cap"] < score
        ]
        for cap in caps:
            score = min(score, cap["cap"])
        return {
            "schemaVersion": GRADE_SCHEMA_VERSION,
            "task": self.task_id,
            "seed": self.seed,
            "score": round(score, 2),
            "parts": parts,
            "capsApplied": caps,
        }

    def emit(self):
        grades = [self._grade_one(root) for root in self.workspace_roots]
        sys.stdout.write(json.dumps(grades[0] if len(grades) == 1 else grades, indent=2) + "\n")
