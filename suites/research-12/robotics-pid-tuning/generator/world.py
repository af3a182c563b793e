# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""robotics-pid-tuning: the planted world (withheld).

The nominal drive (inertia, damping, friction, torque limit) is drawn per seed; scenarios vary inertia by
-40 %..+60 %, damping by +-50 %, friction and the step size (up to 2 rad, where the torque limit saturates the
drive). Careful tuning covers the whole range and prevents integrator wind-up; tuning on the nominal, small-step
case does not. The simulator itself is an input asset and protected.
"""

from genlib import stream

N_SCENARIOS = 40


def truth(seed):
    r = stream(seed, "truth")
    return {"inertia": float(r.uniform(0.01, 0.03)), "damping": float(r.uniform(0.01, 0.04)),
            "friction": float(r.uniform(0.005, 0.02)), "torque_limit": float(r.uniform(0.6, 1.0))}


def scenarios(world, rng, count, prefix):
    out = []
    for i in range(count):
        out.append({
            "id": f"{prefix}{i + 1:03d}",
            "inertia": round(world["inertia"] * float(rng.uniform(0.6, 1.6)), 6),
            "damping": round(world["damping"] * float(rng.uniform(0.5, 1.5)), 6),
            "coulomb_friction": round(world["friction"] * float(rng.uniform(0.0, 1.5)), 6),
            "torque_limit": round(world["torque_limit"], 6),
            "step_rad": float(rng.choice([0.25, 0.5, 1.0, 2.0])),
            "noise_seed": int(rng.integers(0, 2**31 - 1)),
        })
    return out
