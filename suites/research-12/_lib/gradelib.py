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

Reproducibility: mass reruns the task's entry point (its `entry-point` deliverable's `command`) in a fresh sandboxed
copy of each workspace with the deliverables removed, and passes that copy as `--rerun <dir>` (or `--rerun none`),
one per `--workspace`, in the same order. While a workspace is graded, `grader.rerun` is its rerun folder or None, and
`grader.rerun_problem` says why the rerun failed (read from `<dir>.outcome.json`, written by mass beside the folder:
`{"ok": false, "reason": "..."}`), else None. `grader.reproducibility(weight)` scores it.

Helpers for parts: `interval_calibration` (coverage of planted truths by intervals, with width) and `report_numbers`
(the report states metrics.json's values). `python3 gradelib_check.py` checks them.
"""

import argparse
import csv
import hashlib
import json
import math
import re
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


def ablation_variants(ws, keys, what, need=2, rel="results/ablation.json"):
    """(score, reason) of an ablation file {variant name: {metric: number, ...}}: the variants that carry every one of
    `keys`, each a finite number; fewer than `need` of them fails. `what` names a variant in the reason (e.g.
    "strategies")."""
    ablation = ws.json_object(rel)
    measured = []
    for name, entry in ablation.items():
        if isinstance(entry, dict) and all(key in entry for key in keys):
            for key in keys:
                finite_number(entry[key], f"{rel} {name}.{key}")
            measured.append(name)
    carrying = " and ".join(keys)
    if len(measured) < need:
        raise Fail(f"{rel} has {len(measured)} {what} with {carrying} (need {need})")
    return 1.0, f"{len(measured)} {what} with {carrying}"


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


# --- reproducibility: what the rerun wrote against what the workspace holds ------------------------------------------

REL_TOL = 1e-6
ABS_TOL = 1e-9


def _close(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= max(ABS_TOL, REL_TOL * max(abs(a), abs(b)))


def _json_difference(a, b, where):
    """None when the two JSON values agree (numbers within REL_TOL/ABS_TOL), else where they first differ."""
    if isinstance(a, bool) or isinstance(b, bool):
        return None if a is b else where
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return None if _close(float(a), float(b)) else f"{where}: {a} vs {b}"
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{where}: keys differ ({', '.join(sorted(set(a) ^ set(b)))[:80]})"
        for key in a:
            difference = _json_difference(a[key], b[key], f"{where}.{key}")
            if difference:
                return difference
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} vs {len(b)} items"
        for index, (x, y) in enumerate(zip(a, b)):
            difference = _json_difference(x, y, f"{where}[{index}]")
            if difference:
                return difference
        return None
    return None if a == b else where


def _csv_difference(a, b):
    rows_a, rows_b = list(csv.reader(a.splitlines())), list(csv.reader(b.splitlines()))
    if len(rows_a) != len(rows_b):
        return f"{len(rows_a)} vs {len(rows_b)} lines"
    for line, (row_a, row_b) in enumerate(zip(rows_a, rows_b), start=1):
        if len(row_a) != len(row_b):
            return f"line {line}: {len(row_a)} vs {len(row_b)} cells"
        for x, y in zip(row_a, row_b):
            x, y = x.strip(), y.strip()
            try:
                same = _close(float(x), float(y))
            except ValueError:
                same = x == y
            if not same:
                return f"line {line}: {x[:30]} vs {y[:30]}"
    return None


def reproduced(workspace, rerun, rel):
    """(True, "") when the rerun wrote `rel` as the workspace holds it, else (False, why). JSON and CSV numbers may
    differ by REL_TOL relative or ABS_TOL absolute; a PNG must only be a valid PNG; other files must be byte-equal."""
    if not rerun.exists(rel):
        return False, f"{rel} not written by the rerun"
    if not workspace.exists(rel):
        return False, f"{rel} missing from the workspace"
    mine, again = workspace.read_bytes(rel), rerun.read_bytes(rel)
    suffix = Path(rel).suffix.lower()
    if suffix == ".png":
        return (True, "") if png_size(again[:64]) else (False, f"{rel} written by the rerun is not a PNG")
    if suffix in (".json", ".csv"):
        try:
            a, b = mine.decode("utf-8"), again.decode("utf-8")
            if suffix == ".json":
                difference = _json_difference(json.loads(a), json.loads(b), rel)
            else:
                difference = _csv_difference(a, b)
        except ValueError as error:  # not UTF-8, or not JSON
            difference = f"unreadable ({str(error)[:60]})"
        return (True, "") if difference is None else (False, f"{rel} differs: {difference}")
    return (True, "") if mine == again else (False, f"{rel} differs")


# --- interval calibration --------------------------------------------------------------------------------------------


def _binomial_cdf(k, n, p):
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def interval_calibration(truths, lows, highs, nominal=0.95, *, width_best, width_worst, alpha=0.2):
    """(score 0..1, reason) for nominal-`nominal` intervals [low, high] around planted truths.

    score = coverage term x width term.
    - Coverage: if the intervals had their nominal coverage, the number k of truths covered would be
      Binomial(n, nominal). The term is min(1, tail / alpha), tail = the smaller of P(K <= k) and P(K >= k): full marks
      while k is plausible at the nominal level, falling to 0 as it becomes implausible (too few, or for low nominal
      levels too many, covered). At 95 % with n = 8: 8 or 7 covered earn 1, 6 covered 0.29 (P(K <= 6) = 0.057), 5
      covered 0.03.
    - Width: `linear(mean width, width_best, width_worst)`: no penalty up to width_best, none left at width_worst, so
      absurdly wide intervals that cover everything earn nothing.
    A missing interval (None) covers nothing and counts as width_worst; a non-finite bound or high < low fails.

    The mean interval (Winkler) score, width + (2 / (1 - nominal)) x distance outside, is a proper scoring rule and is
    reported in the reason, but not scored: at 95 % a miss costs 40 times its distance, so with the 8-20 intervals of
    a task one narrowly missed truth would decide the part, and its scale differs from task to task.
    """
    n = len(truths)
    if n == 0 or len(lows) != n or len(highs) != n:
        raise ValueError("interval_calibration needs as many lows and highs as truths (at least one)")
    covered, widths, winkler = 0, [], []
    penalty = 2.0 / (1.0 - nominal)
    for index, (truth, low, high) in enumerate(zip(truths, lows, highs)):
        if low is None or high is None:
            widths.append(width_worst)
            winkler.append(math.nan)
            continue
        if not (math.isfinite(low) and math.isfinite(high)):
            raise Fail(f"interval {index + 1} has a non-finite bound")
        if high < low:
            raise Fail(f"interval {index + 1} has high {high:g} < low {low:g}")
        covered += low <= truth <= high
        widths.append(high - low)
        winkler.append(high - low + penalty * (max(0.0, low - truth) + max(0.0, truth - high)))
    tail = min(_binomial_cdf(covered, n, nominal), 1.0 - _binomial_cdf(covered - 1, n, nominal))
    coverage_term = min(1.0, tail / alpha)
    mean_width = sum(widths) / n
    width_term = linear(mean_width, width_best, width_worst)
    scored = [value for value in winkler if math.isfinite(value)]
    winkler_text = f"; mean interval (Winkler) score {sum(scored) / len(scored):.3g}" if scored else ""
    reason = (
        f"{nominal:.0%} intervals cover {covered} of {n} (expected {nominal * n:.1f}; probability of so extreme a "
        f"count {tail:.3f}); mean width {mean_width:.3g} (full marks <= {width_best:g}, none >= {width_worst:g})"
        f"{winkler_text}"
    )
    return coverage_term * width_term, reason


# --- the report states the metrics -----------------------------------------------------------------------------------

_NUMBER = re.compile(
    r"(?<![\w.])[-+\u2212\u2013]?"  # a sign, never the end of a word or a number
    r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"  # 1,234.5 or 0.42 or .5
    r"(?:[eE]([-+\u2212]?\d+))?(?!\w)(\s*%)?"  # 3.1e-07; 42 %
)


def written_numbers(text):
    """[(absolute value, half its last written digit, significant digits)] for every number in `text` as people write
    them: 0.42, -1.5, 1,234.5, 3.1e-07, 42 % (also read as 0.42). Digits inside words (EC50, C07) are not numbers."""
    numbers = []
    for match in _NUMBER.finditer(text):
        mantissa, exponent, percent = match.group(1).replace(",", ""), match.group(2), match.group(3)
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        scale = 10.0 ** int(exponent.replace("\u2212", "-")) if exponent else 1.0
        digits = mantissa.replace(".", "").lstrip("0")
        value = float(mantissa) * scale
        half_step = 0.5 * 10.0**-decimals * scale
        numbers.append((value, half_step, len(digits)))
        if percent:
            numbers.append((value / 100, half_step / 100, len(digits)))
    return numbers


def number_written(value, numbers):
    """Whether |value| is among `numbers` (from `written_numbers`), rounded as written with at least two significant
    digits, or exactly (3 as "3")."""
    target = abs(float(value))
    for written, half_step, digits in numbers:
        if abs(target - written) <= 1e-12 * max(1.0, target):
            return True
        if digits >= 2 and abs(target - written) <= half_step * (1 + 1e-9):
            return True
    return False


def _leaves(value):
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def report_numbers(ws, report_path, metrics_path, keys):
    """(score 0..1, reason): the share of metrics.json's values under `keys` that the report states. A number counts
    when written rounded as people do (0.4213 as 0.42 or 42.1 %; sign ignored); a string (a compound id) when named as
    a word, case-insensitive; a list or object by the share of its items (recursively). Booleans are not checked; a
    missing key or null scores 0 for that key. The total is the mean over keys."""
    metrics = ws.json_object(metrics_path)
    text = ws.text(report_path)
    numbers = written_numbers(text)
    shares, missing = [], []
    for key in keys:
        leaves = [leaf for leaf in _leaves(metrics.get(key)) if not isinstance(leaf, bool)]
        found, lacking = 0, []
        for leaf in leaves:
            if isinstance(leaf, (int, float)) and math.isfinite(leaf):
                hit = number_written(leaf, numbers)
            elif isinstance(leaf, str) and leaf.strip():
                hit = re.search(r"(?<!\w)" + re.escape(leaf.strip()) + r"(?!\w)", text, re.IGNORECASE) is not None
            else:
                hit = False
            found += hit
            if not hit:
                lacking.append(json.dumps(leaf)[:40])
        if key not in metrics:
            shares.append(0.0)
            missing.append(f"{key} (not in {metrics_path})")
            continue
        shares.append(found / len(leaves) if leaves else 1.0)
        if lacking:
            missing.append(f"{key} ({', '.join(lacking[:4])}{', ...' if len(lacking) > 4 else ''})")
    score = sum(shares) / len(shares) if shares else 0.0
    stated = sum(share == 1.0 for share in shares)
    reason = f"{report_path} states {stated} of {len(shares)} checked values of {metrics_path}"
    return score, reason + (f"; not found: {'; '.join(missing)}" if missing else "")


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
        parser.add_argument(
            "--rerun",
            action="append",
            default=[],
            help="the entry point's rerun folder of each --workspace, in order, or `none` (see the module's notes)",
        )
        args = parser.parse_args(argv)
        if args.rerun and len(args.rerun) != len(args.workspace):
            parser.error(f"give one --rerun per --workspace ({len(args.rerun)} for {len(args.workspace)})")
        self.task_id = task_id
        self.seed = args.seed
        self.task_dir = Path(args.task_dir).resolve()
        self.workspace_roots = args.workspace
        self.rerun_roots = [None if rerun == "none" else rerun for rerun in args.rerun] or [None] * len(args.workspace)
        self.rerun = None
        self.rerun_problem = None
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

    def reproducibility(self, weight, paths=None):
        """Registers the part "reproducibility": the share of `paths` (default: every deliverable but the report and
        the entry point) that the rerun wrote as the workspace holds them (see `reproduced`); 0 without a rerun or when
        it failed."""
        if paths is None:
            kinds = ("report", "entry-point")
            paths = [d["path"] for d in self.manifest.get("deliverables", []) if d.get("kind") not in kinds]

        @self.part("reproducibility", weight)
        def _():
            if self.rerun is None:
                raise Fail("the entry point was not rerun (no --rerun for this workspace)")
            if self.rerun_problem:
                raise Fail(f"the rerun of the entry point failed: {self.rerun_problem}")
            if not paths:
                raise Fail("no deliverables to compare with the rerun")
            rerun = Workspace(self.rerun)
            outcomes = [reproduced(self.workspace, rerun, rel) for rel in paths]
            problems = [why for ok, why in outcomes if not ok]
            same = len(paths) - len(problems)
            reason = f"the rerun reproduced {same} of {len(paths)} deliverables"
            return same / len(paths), reason + (f": {'; '.join(problems)}" if problems else "")

    def _set_rerun(self, rerun_root):
        self.rerun = Path(rerun_root).resolve() if rerun_root else None
        self.rerun_problem = None
        if self.rerun is None:
            return
        outcome_file = self.rerun.with_name(self.rerun.name + ".outcome.json")
        if outcome_file.is_file():
            outcome = json.loads(outcome_file.read_text())
            if not outcome.get("ok", False):
                self.rerun_problem = str(outcome.get("reason") or "no reason given")
        elif not self.rerun.is_dir():
            self.rerun_problem = f"its folder {self.rerun} does not exist"

    def _grade_one(self, root, rerun_root=None):
        self.workspace.target = Workspace(root)
        self._set_rerun(rerun_root)
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
        grades = [self._grade_one(root, rerun) for root, rerun in zip(self.workspace_roots, self.rerun_roots)]
        sys.stdout.write(json.dumps(grades[0] if len(grades) == 1 else grades, indent=2) + "\n")
