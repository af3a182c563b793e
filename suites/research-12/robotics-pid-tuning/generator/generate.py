# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the inputs of robotics-pid-tuning for one seed: the nominal drive and the evaluation scenarios."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import world  # noqa: E402
from genlib import parse_args, stream, write_json  # noqa: E402


def main():
    seed, out = parse_args(__doc__)
    truth = world.truth(seed)
    write_json(out / "scenarios.json", world.scenarios(truth, stream(seed, "scenarios"), world.N_SCENARIOS, "s"))
    write_json(out / "drive.json", {
        "nominal_inertia_kg_m2": round(truth["inertia"], 6), "nominal_damping_N_m_s": round(truth["damping"], 6),
        "coulomb_friction_max_N_m": round(truth["friction"] * 1.5, 6), "torque_limit_N_m": round(truth["torque_limit"], 6),
        "inertia_range": [0.6, 1.6], "damping_range": [0.5, 1.5], "step_sizes_rad": [0.25, 0.5, 1.0, 2.0],
    })


if __name__ == "__main__":
    main()
