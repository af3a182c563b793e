# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of robotics-state-estimation (withheld). Prints the grade as JSON."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from gradelib import Fail, Grader, ablation_variants, linear, number_at, report_numbers  # noqa: E402

grader = Grader("robotics-state-estimation")
ws = grader.workspace
truth = world.truth(grader.seed)
runs = {name: world.run(truth, grader.seed, name) for name in world.RUNS}
for data in runs.values():
    data["pose"][0] = np.round(data["pose"][0], 4)  # the start pose as published
ORACLE = (truth["velocity_scale"], truth["gyro_bias"], truth["velocity_std"], truth["gyro_std"], truth["range_std"], truth["bearing_std"])
oracle_errors = np.concatenate([world.position_errors(world.ekf(runs[n], *ORACLE), runs[n]["pose"]) for n in ("eval_a", "eval_b")])
oracle_rmse = float(np.sqrt(np.mean(oracle_errors**2)))
oracle_p95 = float(np.percentile(oracle_errors, 95))


def trajectory_errors(name):
    rel = f"results/trajectory_{name}.csv"
    rows = ws.csv_numeric(rel, "t", ("x", "y"))
    times = [f"{t:.1f}" for t in runs[name]["odometry"][:, 0]]
    by_time = {f"{float(key):.1f}": value for key, value in rows.items() if _is_number(key)}
    missing = [t for t in times if t not in by_time]
    if missing:
        raise Fail(f"{rel} lacks {len(missing)} of the {len(times)} odometry times (e.g. t={missing[0]})")
    estimate = np.array([by_time[t] for t in times])
    pose = runs[name]["pose"]
    return np.hypot(estimate[:, 0] - pose[1:, 0], estimate[:, 1] - pose[1:, 1])


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def eval_errors():
    return np.concatenate([trajectory_errors("eval_a"), trajectory_errors("eval_b")])


grader.deliverables(0.1)
grader.reproducibility(0.1, [
    "results/calibration.json", "results/metrics.json", "results/ablation.json", "results/trajectory_calibration.csv",
    "results/trajectory_eval_a.csv", "results/trajectory_eval_b.csv",
])


@grader.part("evaluation_rmse", 0.3)
def _():
    rmse = float(np.sqrt(np.mean(eval_errors() ** 2)))
    ratio = rmse / oracle_rmse
    return linear(np.log(ratio), np.log(1.5), np.log(8.0)), f"position RMSE {rmse:.3f} m on the evaluation runs; an EKF with the true parameters: {oracle_rmse:.3f} m"


@grader.part("calibration_accuracy", 0.15)
def _():
    calibration = ws.json_object("results/calibration.json")
    scale = number_at(calibration, "velocity_scale", "results/calibration.json")
    bias = number_at(calibration, "gyro_bias", "results/calibration.json")
    range_std = number_at(calibration, "range_std", "results/calibration.json")
    if range_std <= 0:
        raise Fail("results/calibration.json range_std must be positive")
    scale_error, bias_error = abs(scale - truth["velocity_scale"]), abs(bias - truth["gyro_bias"])
    range_ratio = range_std / truth["range_std"]
    score = (
        0.4 * linear(scale_error, 0.005, 0.03)
        + 0.4 * linear(bias_error, 0.002, 0.015)
        + 0.2 * linear(abs(np.log(range_ratio)), np.log(1.3), np.log(3.0))
    )
    return score, (
        f"velocity scale error {scale_error:.4f}, gyro bias error {bias_error:.4f} rad/s, "
        f"range noise {range_std:.3f} m against {truth['range_std']:.3f} m planted for the regular readings"
    )


@grader.part("outlier_robustness", 0.15)
def _():
    p95 = float(np.percentile(eval_errors(), 95))
    reported = number_at(ws.json_object("results/metrics.json"), "outlier_fraction", "results/metrics.json")
    rate_error = abs(reported - truth["outlier_rate"])
    score = 0.5 * linear(p95 / oracle_p95, 1.5, 8.0) + 0.5 * linear(rate_error, 0.015, 0.05)
    return score, f"95th-percentile error {p95:.3f} m (true-parameter EKF {oracle_p95:.3f} m); outlier share {reported:.3f} reported vs {truth['outlier_rate']:.3f} planted"


@grader.part("reported_calibration_rmse", 0.1)
def _():
    reported = number_at(ws.json_object("results/metrics.json"), "calibration_rmse_m", "results/metrics.json")
    actual = float(np.sqrt(np.mean(trajectory_errors("calibration") ** 2)))
    if reported <= 0:
        raise Fail("calibration_rmse_m must be positive")
    return linear(abs(np.log(reported / actual)), 0.1, 0.5), f"reported calibration-run RMSE {reported:.3f} m, recomputed {actual:.3f} m"


@grader.part("ablation_format", 0.05)
def _():
    return ablation_variants(ws, ["calibration_rmse_m"], "estimator variants")


@grader.part("report_numbers", 0.05)
def _():
    return report_numbers(ws, "research_report.md", "results/metrics.json", ["calibration_rmse_m", "outlier_fraction"])


grader.emit()
