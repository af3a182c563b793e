# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""robotics-state-estimation: the planted world (withheld).

A differential-drive robot drives three 60 s runs among known landmarks. Wheel odometry over-reads speed by a planted
scale factor and the gyro has a planted bias; a range-bearing sensor observes landmarks within 8 m at 5 Hz, and a
planted share of range readings are short multipath returns. Only the calibration run comes with ground truth; the
two evaluation runs are graded against their withheld truth, and against an EKF that knows the true parameters.
"""

import numpy as np

from genlib import stream

DT = 0.1
STEPS = 600
SENSOR_RANGE = 8.0
RUNS = ("calibration", "eval_a", "eval_b")
N_LANDMARKS = 14


def truth(seed):
    r = stream(seed, "truth")
    return {"velocity_scale": float(r.uniform(0.03, 0.08)), "gyro_bias": float(r.choice([-1, 1]) * r.uniform(0.01, 0.03)),
            "velocity_std": 0.02, "gyro_std": 0.01, "range_std": 0.1, "bearing_std": 0.03,
            "outlier_rate": float(r.uniform(0.04, 0.08))}


def landmarks(seed):
    r = stream(seed, "landmarks")
    return r.uniform(-12, 12, (N_LANDMARKS, 2))


def run(world, seed, name):
    """Ground truth, odometry and observations of one run."""
    r = stream(seed, f"run-{name}")
    v = 0.55 + 0.2 * np.sin(np.cumsum(r.normal(0, 0.05, STEPS)))
    w = np.zeros(STEPS)
    pose = np.zeros((STEPS + 1, 3))
    pose[0] = [r.uniform(-3, 3), r.uniform(-3, 3), r.uniform(-np.pi, np.pi)]
    heading_rate = 0.0
    for k in range(STEPS):
        x, y, th = pose[k]
        home = np.arctan2(-y, -x) - th  # steer back towards the centre when far out
        pull = np.arctan2(np.sin(home), np.cos(home)) * (0.4 if np.hypot(x, y) > 8 else 0.0)
        heading_rate = 0.95 * heading_rate + r.normal(0, 0.06)
        w[k] = np.clip(heading_rate + pull, -0.7, 0.7)
        pose[k + 1] = [x + v[k] * DT * np.cos(th), y + v[k] * DT * np.sin(th), th + w[k] * DT]
    odometry = np.column_stack([
        np.arange(1, STEPS + 1) * DT,
        v * (1 + world["velocity_scale"]) + r.normal(0, world["velocity_std"], STEPS),
        w + world["gyro_bias"] + r.normal(0, world["gyro_std"], STEPS),
    ])
    marks = landmarks(seed)
    observations = []
    for k in range(2, STEPS + 1, 2):
        x, y, th = pose[k]
        for i, (lx, ly) in enumerate(marks):
            distance = np.hypot(lx - x, ly - y)
            if distance > SENSOR_RANGE:
                continue
            bearing = np.arctan2(ly - y, lx - x) - th + r.normal(0, world["bearing_std"])
            measured = distance + r.normal(0, world["range_std"])
            if r.random() < world["outlier_rate"]:
                measured = distance * r.uniform(0.3, 0.8)
            observations.append((k * DT, i + 1, measured, np.arctan2(np.sin(bearing), np.cos(bearing))))
    return {"pose": pose, "odometry": odometry, "observations": observations, "landmarks": marks}


def ekf(data, velocity_scale, gyro_bias, q_v, q_w, r_range, r_bearing, gate=9.21):
    """EKF trajectory (STEPS x 3, after each odometry step) from a known start pose."""
    marks = data["landmarks"]
    state, cov = data["pose"][0].astype(float).copy(), np.eye(3) * 1e-4
    by_step = {}
    for t, i, rng_, brg in data["observations"]:
        by_step.setdefault(int(round(t / DT)), []).append((int(i), rng_, brg))
    out = np.empty((STEPS, 3))
    noise = np.diag([r_range**2, r_bearing**2])
    for k, (_, vm, wm) in enumerate(data["odometry"], start=1):
        v, w, th = vm / (1 + velocity_scale), wm - gyro_bias, state[2]
        state = state + [v * DT * np.cos(th), v * DT * np.sin(th), w * DT]
        F = np.array([[1, 0, -v * DT * np.sin(th)], [0, 1, v * DT * np.cos(th)], [0, 0, 1]])
        G = np.array([[DT * np.cos(th), 0], [DT * np.sin(th), 0], [0, DT]])
        cov = F @ cov @ F.T + G @ np.diag([q_v**2, q_w**2]) @ G.T
        for i, rng_, brg in by_step.get(k, []):
            dx, dy = marks[i - 1] - state[:2]
            q = dx * dx + dy * dy
            predicted = np.array([np.sqrt(q), np.arctan2(dy, dx) - state[2]])
            innovation = np.array([rng_, brg]) - predicted
            innovation[1] = np.arctan2(np.sin(innovation[1]), np.cos(innovation[1]))
            H = np.array([[-dx / np.sqrt(q), -dy / np.sqrt(q), 0], [dy / q, -dx / q, -1]])
            S = H @ cov @ H.T + noise
            if gate is not None and innovation @ np.linalg.solve(S, innovation) > gate:
                continue
            K = cov @ H.T @ np.linalg.inv(S)
            state = state + K @ innovation
            cov = (np.eye(3) - K @ H) @ cov
        out[k - 1] = state
    return out


def position_errors(estimate, pose):
    return np.hypot(estimate[:, 0] - pose[1:, 0], estimate[:, 1] - pose[1:, 1])
