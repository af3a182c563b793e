# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Self-check of gradelib's reproducibility, interval calibration and report-number helpers:
`python3 gradelib_check.py` prints "gradelib ok" or fails an assertion (run by test/tasks/grading.e2e.test.ts)."""

import contextlib
import io
import json
import struct
import sys
import tempfile
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gradelib import Fail, Grader, Workspace, ablation_variants, interval_calibration, report_numbers, written_numbers  # noqa: E402


def png_bytes(width=120, height=120):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\xff" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def write(root, files):
    for rel, content in files.items():
        target = Path(root) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else content.encode())


def calibration(truths, lows, highs):
    return interval_calibration(truths, lows, highs, width_best=0.4, width_worst=1.0)


def check_interval_calibration():
    truths = [float(i) for i in range(8)]
    lows, highs = [t - 0.15 for t in truths], [t + 0.15 for t in truths]
    score, _ = calibration(truths, lows, highs)
    assert score == 1.0, score
    seven = [t + (1.0 if i == 0 else 0.0) for i, t in enumerate(truths)]
    score, _ = calibration(seven, lows, highs)
    assert score == 1.0, f"7 of 8 at 95 % is plausible: {score}"
    six = [t + (1.0 if i < 2 else 0.0) for i, t in enumerate(truths)]
    score, reason = calibration(six, lows, highs)
    assert 0.2 < score < 0.4, f"6 of 8 at 95 % must not earn full marks: {score} ({reason})"
    assert "cover 6 of 8" in reason and "Winkler" in reason, reason
    score, _ = calibration(truths, [t - 5 for t in truths], [t + 5 for t in truths])
    assert score == 0.0, f"absurdly wide intervals earn nothing: {score}"
    score, _ = calibration(truths, [None] * 8, [None] * 8)
    assert score == 0.0, score
    for lows, highs in (([1.0], [0.0]), ([float("nan")], [1.0])):
        try:
            calibration([0.5], lows, highs)
        except Fail:
            continue
        raise AssertionError(f"{lows}, {highs} must fail")


def check_report_numbers(root):
    metrics = {
        "ratio": 0.4213,
        "best": "CPD-03",
        "order": ["CPD-03", "CPD-01"],
        "total": 12345.6,
        "effect": -6.12,
        "share": 0.0731,
        "count": 3,
        "flag": True,
    }
    report = "Ratio 0.42; CPD-03 leads cpd-01. Total 12,345.6; the effect is \u22126.1 mmHg; 7.3 % share; 3 runs."
    write(root, {"m.json": json.dumps(metrics), "r.md": report})
    ws = Workspace(root)
    keys = ["ratio", "best", "order", "total", "effect", "share", "count", "flag"]
    score, reason = report_numbers(ws, "r.md", "m.json", keys)
    assert score == 1.0, reason
    write(root, {"r.md": "Ratio 0.4 (EC50 of 50 nM); CPD-03 leads. 12346 total"})
    score, reason = report_numbers(ws, "r.md", "m.json", ["ratio", "order", "total", "missing"])
    assert score == 0.5 / 4 + 1 / 4, reason  # 0.4 has one digit only; CPD-01 is not named; "missing" is not a key
    assert "missing (not in m.json)" in reason and '"CPD-01"' in reason, reason
    assert [n[0] for n in written_numbers("EC50 C07 log10 x2")] == [], "digits inside words are not numbers"


def grade(root, workspaces, reruns, manifest):
    manifest_file = Path(root) / "manifest.json"
    manifest_file.write_text(json.dumps(manifest))
    argv = [arg for ws in workspaces for arg in ("--workspace", ws)]
    argv += [arg for rerun in reruns for arg in ("--rerun", rerun)]
    grader = Grader("check", argv + ["--seed", "1", "--task-dir", str(root), "--manifest", str(manifest_file)])
    grader.reproducibility(1.0)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        grader.emit()
    result = json.loads(out.getvalue())
    return result if isinstance(result, list) else [result]


def check_reproducibility(root):
    root = Path(root)
    deliverables = [
        {"kind": "report", "path": "report.md"},
        {"kind": "metrics-json", "path": "results/metrics.json"},
        {"kind": "csv", "path": "results/table.csv"},
        {"kind": "plot", "path": "plots/fit.png"},
        {"kind": "entry-point", "path": "run.py", "command": "python3 run.py"},
    ]
    workspace = {
        "report.md": "# Report\n",
        "results/metrics.json": json.dumps({"ec50": 1.2345678, "order": ["a", "b"]}),
        "results/table.csv": "name,value\na,0.5\nb,2.25\n",
        "plots/fit.png": png_bytes(),
        "run.py": "print('hi')\n",
    }
    write(root / "ws", workspace)
    # Same numbers up to last-digit noise, another PNG rendering: reproduced.
    write(root / "same", {
        "results/metrics.json": json.dumps({"order": ["a", "b"], "ec50": 1.2345678000001}),
        "results/table.csv": "name,value\na,0.50000000001\nb,2.25\n",
        "plots/fit.png": png_bytes(200, 150),
    })
    # Other numbers, a missing table, a plot that is not a PNG.
    other = {"results/metrics.json": json.dumps({"ec50": 1.3, "order": ["a", "b"]}), "plots/fit.png": b"not a png"}
    write(root / "other", other)
    write(root / "failed", {})
    (root / "failed.outcome.json").write_text(json.dumps({"ok": False, "reason": "timed out after 600 s"}))
    ws = str(root / "ws")
    reruns = [str(root / "same"), str(root / "other"), str(root / "failed"), "none"]
    grades = grade(root, [ws] * 4, reruns, {"deliverables": deliverables})
    parts = [g["parts"][0] for g in grades]
    assert parts[0]["score"] == 1.0 and "reproduced 3 of 3" in parts[0]["reason"], parts[0]
    assert parts[1]["score"] == 0.0, parts[1]
    for text in (
        "results/metrics.json differs: results/metrics.json.ec50: 1.2345678 vs 1.3",
        "results/table.csv not written",
        "plots/fit.png written by the rerun is not a PNG",
    ):
        assert text in parts[1]["reason"], parts[1]["reason"]
    assert parts[2]["score"] == 0.0 and "timed out after 600 s" in parts[2]["reason"], parts[2]
    assert parts[3]["score"] == 0.0 and "not rerun" in parts[3]["reason"], parts[3]
    write(root / "half", {"results/metrics.json": workspace["results/metrics.json"]})
    [half] = grade(root, [ws], [str(root / "half")], {"deliverables": deliverables})
    assert abs(half["parts"][0]["score"] - 1 / 3) < 1e-3, half
    [absent] = grade(root, [ws], [], {"deliverables": deliverables})
    assert absent["parts"][0]["score"] == 0.0, absent
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            grade(root, [ws, ws], [str(root / "same")], {"deliverables": deliverables})
    except SystemExit:
        pass
    else:
        raise AssertionError("one --rerun for two --workspace must be refused")


def check_ablation_variants(root):
    ablation = {"full": {"cost": 3.5, "n": 4}, "no-heuristic": {"cost": 4.0, "n": 9}, "notes": "text", "half": {"cost": 1}}
    write(root, {"results/ablation.json": json.dumps(ablation)})
    ws = Workspace(root)
    score, reason = ablation_variants(ws, ["cost", "n"], "variants")
    assert score == 1.0 and reason == "2 variants with cost and n", reason
    for keys, broken, message in (
        (["cost", "n", "seed"], ablation, "has 0 variants with cost and n and seed (need 2)"),
        (["cost"], {"a": {"cost": 1}, "b": {"cost": "NaN"}}, "results/ablation.json b.cost is not a number"),
    ):
        write(root, {"results/ablation.json": json.dumps(broken)})
        try:
            ablation_variants(ws, keys, "variants")
        except Fail as fail:
            assert message in str(fail), str(fail)
        else:
            raise AssertionError(f"{broken} with {keys} must fail")


def main():
    check_interval_calibration()
    with tempfile.TemporaryDirectory() as root:
        check_report_numbers(root)
    with tempfile.TemporaryDirectory() as root:
        check_ablation_variants(root)
    with tempfile.TemporaryDirectory() as root:
        check_reproducibility(root)
    print("gradelib ok")


if __name__ == "__main__":
    main()
