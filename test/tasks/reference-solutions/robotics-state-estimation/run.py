"""Reference solution for robotics-state-estimation: `python3 run.py` (careful), `--careless` (every trap) or
`--trap <name>`: no-calibration (odometry and gyro used as read), outliers-kept (every range reading trusted: noise from
plain residual standard deviations, no gate, no anomaly reported)."""

import json

import numpy as np
import pandas as pd

import refkit

TRAPS = refkit.fallen_traps({"no-calibration", "outliers-kept"})
DT = 0.1
RUNS = ("calibration", "eval_a", "eval_b")


def wrap(a):
    return np.arctan2(np.sin(a), np.cos(a))


def ekf(odometry, observations, start, marks, scale, bias, q, r, gate):
    state, cov = np.array([start["x"], start["y"], start["theta"]], float), np.eye(3) * 1e-4
    by_time = {round(t, 1): g for t, g in observations.groupby(observations.t.round(1))}
    out, accepted, rejected = [], 0, 0
    R = np.diag([r[0] ** 2, r[1] ** 2])
    for t, vm, wm in odometry[["t", "v", "omega"]].itertuples(index=False):
        v, w, th = vm / (1 + scale), wm - bias, state[2]
        state = state + [v * DT * np.cos(th), v * DT * np.sin(th), w * DT]
        F = np.array([[1, 0, -v * DT * np.sin(th)], [0, 1, v * DT * np.cos(th)], [0, 0, 1]])
        G = np.array([[DT * np.cos(th), 0], [DT * np.sin(th), 0], [0, DT]])
        cov = F @ cov @ F.T + G @ np.diag([q[0] ** 2, q[1] ** 2]) @ G.T
        group = by_time.get(round(t, 1))
        if group is not None:
            for i, rng_, brg in group[["landmark_id", "range", "bearing"]].itertuples(index=False):
                dx, dy = marks[int(i)] - state[:2]
                qq = dx * dx + dy * dy
                innovation = np.array([rng_ - np.sqrt(qq), wrap(brg - (np.arctan2(dy, dx) - state[2]))])
                H = np.array([[-dx / np.sqrt(qq), -dy / np.sqrt(qq), 0], [dy / qq, -dx / qq, -1]])
                S = H @ cov @ H.T + R
                if gate and innovation @ np.linalg.solve(S, innovation) > 9.21:
                    rejected += 1
                    continue
                accepted += 1
                K = cov @ H.T @ np.linalg.inv(S)
                state = state + K @ innovation
                cov = (np.eye(3) - K @ H) @ cov
        out.append((t, *state))
    return pd.DataFrame(out, columns=["t", "x", "y", "theta"]), rejected / max(1, accepted + rejected)


def main():
    refkit.prepare()
    marks = {int(r.landmark_id): np.array([r.x, r.y]) for r in pd.read_csv("data/landmarks.csv").itertuples()}
    logs = {n: (pd.read_csv(f"data/{n}_odometry.csv"), pd.read_csv(f"data/{n}_observations.csv"), json.load(open(f"data/{n}_start.json"))) for n in RUNS}
    truth = pd.read_csv("data/calibration_truth.csv")
    odometry, observations, start = logs["calibration"]
    pose = np.vstack([[start["x"], start["y"], start["theta"]], truth[["x", "y", "theta"]].to_numpy()])
    true_v = np.hypot(*np.diff(pose[:, :2], axis=0).T) / DT
    true_w = wrap(np.diff(pose[:, 2])) / DT
    scale = float(np.sum(odometry.v * true_v) / np.sum(true_v**2) - 1)
    bias = float(np.mean(odometry.omega - true_w))
    q = (float(np.std(odometry.v / (1 + scale) - true_v)), float(np.std(odometry.omega - bias - true_w)))
    if "no-calibration" in TRAPS:
        scale, bias = 0.0, 0.0
    residual_r, residual_b = [], []
    truth_at = {round(t, 1): p for t, p in zip(truth.t, truth[["x", "y", "theta"]].to_numpy())}
    for t, i, rng_, brg in observations[["t", "landmark_id", "range", "bearing"]].itertuples(index=False):
        x, y, th = truth_at[round(t, 1)]
        dx, dy = marks[int(i)] - [x, y]
        residual_r.append(rng_ - np.hypot(dx, dy))
        residual_b.append(wrap(brg - (np.arctan2(dy, dx) - th)))
    residual_r = np.array(residual_r)
    if "outliers-kept" in TRAPS:
        inliers = np.ones(len(residual_r), bool)
        gate = False
    else:
        inliers = np.abs(residual_r) < 5 * 1.4826 * np.median(np.abs(residual_r))
        gate = True
    r = (float(np.std(residual_r[inliers])), float(np.std(residual_b)))
    outlier_share = float(1 - inliers.mean())
    trajectories, rejected = {}, {}
    for n in RUNS:
        trajectories[n], rejected[n] = ekf(*logs[n], marks, scale, bias, q, r, gate)
        trajectories[n].to_csv(f"results/trajectory_{n}.csv", index=False, float_format="%.5f")
    errors = np.hypot(trajectories["calibration"].x - truth.x, trajectories["calibration"].y - truth.y)
    rmse = float(np.sqrt(np.mean(errors**2)))
    refkit.save_json("calibration.json", {"velocity_scale": scale, "gyro_bias": bias, "velocity_std": q[0], "gyro_std": q[1],
                                          "range_std": r[0], "bearing_std": r[1]})
    refkit.save_json("metrics.json", {"calibration_rmse_m": rmse, "outlier_fraction": outlier_share,
                                      "gated_share_eval_a": rejected["eval_a"], "gated_share_eval_b": rejected["eval_b"]})
    variants = {}
    for label, args in (("chosen", (scale, bias, q, r, gate)), ("no_gating", (scale, bias, q, r, False)), ("no_calibration", (0.0, 0.0, q, r, gate))):
        estimate, _ = ekf(*logs["calibration"], marks, *args)
        variants[label] = {"calibration_rmse_m": float(np.sqrt(np.mean((estimate.x - truth.x) ** 2 + (estimate.y - truth.y) ** 2)))}
    refkit.save_json("ablation.json", variants)
    fig, ax = refkit.figure("Estimated trajectories", "x (m)", "y (m)")
    for n in RUNS:
        ax.plot(trajectories[n].x, trajectories[n].y, label=n)
    ax.plot(truth.x, truth.y, "k--", lw=0.8, label="calibration truth")
    ax.plot(*np.array(list(marks.values())).T, "k^")
    ax.legend()
    refkit.save_plot(fig, "trajectories.png")
    fig, ax = refkit.figure("Calibration run: position error", "t (s)", "error (m)")
    ax.plot(truth.t, errors)
    refkit.save_plot(fig, "calibration_error.png")
    refkit.write_report("Landmark-based localisation with uncalibrated odometry", [
        ("Summary", f"An extended Kalman filter fusing calibrated odometry with gated range-bearing observations reaches {rmse:.4f} m RMSE on the calibration run. Calibration: odometry over-reads speed by {100 * scale:.2f} %, gyro bias {bias:.4f} rad/s."),
        ("Data", "Three 60 s runs with wheel odometry at 10 Hz and a range-bearing sensor at 5 Hz; ground truth only for the calibration run. Range residuals against truth have a heavy lower tail: short returns (multipath) make up about " + f"{100 * outlier_share:.1f} % of readings (outlier_fraction {outlier_share:.4f})."),
        ("Method", "Speed scale by least squares of measured against true speed, gyro bias as the mean yaw-rate residual, process and sensor noise as residual standard deviations (robustly, excluding outliers). The EKF rejects observations whose Mahalanobis distance exceeds the 99 % chi-square bound with two degrees of freedom."),
        ("Results", refkit.table([[k, f"{v['calibration_rmse_m']:.3f}"] for k, v in variants.items()], ["variant", "calibration-run RMSE (m)"]) + "\n\nPlots: deliverables/plots/trajectories.png and deliverables/plots/calibration_error.png."),
        ("Limitations", "Calibration parameters are assumed constant across runs; gating could reject true observations after a long outage, and the start pose is taken as exact. The evaluation runs have no ground truth here, so their accuracy is inferred from the calibration run and the filter's gating statistics. Reproduce with python3 run.py."),
    ])


if __name__ == "__main__":
    main()
