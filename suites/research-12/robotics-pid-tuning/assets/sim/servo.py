"""Position servo simulator (protected: read it, run it, do not modify it).

A DC motor turns an inertia through a current-limited drive. The controller is a PID on the position error with a
first-order filtered derivative on the measurement, optional conditional-integration anti-windup, one sample of
computation delay and noisy position measurements.

Usage from Python:

    from sim.servo import simulate, evaluate
    result = simulate(controller, scenarios)   # time series for every scenario
    report = evaluate(controller, scenarios)   # per-scenario metrics and the overall pass rate

From the shell:

    python3 sim/servo.py --controller results/controller.json --scenarios data/scenarios.json

`controller` is a dict {"kp", "ki", "kd", "derivative_filter_s", "anti_windup"}; `scenarios` a list of dicts
{"id", "inertia", "damping", "coulomb_friction", "torque_limit", "step_rad", "noise_seed"}.
"""

import argparse
import json

import numpy as np

DT = 0.002  # s
HORIZON = 2.5  # s
NOISE_STD = 0.002  # rad
SPEC = {"max_overshoot_pct": 10.0, "max_settling_time_s": 1.0, "settling_band_pct": 2.0, "max_final_error_pct": 1.0}


def simulate(controller, scenarios):
    """Simulates every scenario at once; returns {"t": times, "position": array (steps x scenarios), "command": ...}."""
    n = len(scenarios)
    get = lambda key: np.array([float(s[key]) for s in scenarios])  # noqa: E731
    inertia, damping, friction = get("inertia"), get("damping"), get("coulomb_friction")
    limit, reference = get("torque_limit"), get("step_rad")
    kp, ki, kd = (float(controller[k]) for k in ("kp", "ki", "kd"))
    tf = max(float(controller["derivative_filter_s"]), DT)
    anti_windup = bool(controller["anti_windup"])
    noise = np.stack([np.random.default_rng(int(s["noise_seed"])).normal(0, NOISE_STD, int(HORIZON / DT)) for s in scenarios], axis=1)

    steps = int(HORIZON / DT)
    position, velocity = np.zeros(n), np.zeros(n)
    integral, derivative, previous_measurement = np.zeros(n), np.zeros(n), np.zeros(n)
    applied = np.zeros(n)
    alpha = DT / (tf + DT)
    positions, commands = np.empty((steps, n)), np.empty((steps, n))
    for k in range(steps):
        measured = position + noise[k]
        error = reference - measured
        raw_derivative = -(measured - previous_measurement) / DT if k else np.zeros(n)
        derivative += alpha * (raw_derivative - derivative)
        previous_measurement = measured
        unsaturated = kp * error + ki * integral + kd * derivative
        command = np.clip(unsaturated, -limit, limit)
        if anti_windup:
            saturated = (unsaturated != command) & (np.sign(error) == np.sign(unsaturated))
            integral += np.where(saturated, 0.0, error * DT)
        else:
            integral += error * DT
        torque = applied  # one sample of computation delay
        applied = command
        stiction = np.abs(velocity) < 1e-4
        drive = torque - damping * velocity
        friction_torque = np.where(stiction, np.clip(drive, -friction, friction), friction * np.sign(velocity))
        velocity = velocity + (drive - friction_torque) / inertia * DT
        position = position + velocity * DT
        positions[k], commands[k] = position, command
    return {"t": np.arange(1, steps + 1) * DT, "position": positions, "command": commands}


def evaluate(controller, scenarios):
    """Step-response metrics per scenario against SPEC, and the pass rate."""
    run = simulate(controller, scenarios)
    t, y = run["t"], run["position"]
    rows = []
    for j, scenario in enumerate(scenarios):
        ref = float(scenario["step_rad"])
        response = y[:, j]
        if not np.all(np.isfinite(response)):
            rows.append({"id": scenario["id"], "overshoot_pct": 1e9, "settling_time_s": HORIZON, "final_error_pct": 1e9, "itae": 1e9, "pass": False})
            continue
        overshoot = max(0.0, (response.max() - ref) / ref * 100)
        outside = np.flatnonzero(np.abs(response - ref) > SPEC["settling_band_pct"] / 100 * ref)
        settling = float(t[outside[-1]]) if outside.size else 0.0
        final_error = float(np.abs(response[-int(0.2 / DT):] - ref).mean() / ref * 100)
        itae = float(np.sum(t * np.abs(ref - response)) * DT / ref)
        passed = overshoot <= SPEC["max_overshoot_pct"] and settling <= SPEC["max_settling_time_s"] and final_error <= SPEC["max_final_error_pct"]
        rows.append({"id": scenario["id"], "overshoot_pct": overshoot, "settling_time_s": settling,
                     "final_error_pct": final_error, "itae": itae, "pass": bool(passed)})
    return {"scenarios": rows, "pass_rate": sum(r["pass"] for r in rows) / len(rows)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--controller", required=True)
    parser.add_argument("--scenarios", required=True)
    args = parser.parse_args()
    with open(args.controller) as f:
        controller = json.load(f)
    with open(args.scenarios) as f:
        scenarios = json.load(f)
    print(json.dumps(evaluate(controller, scenarios), indent=2))


if __name__ == "__main__":
    main()
