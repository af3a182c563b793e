# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the inputs of pharmacy-treatment-effects for one seed: the registry and a cohort of new patients."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import world  # noqa: E402
from genlib import parse_args, write_csv  # noqa: E402


BASELINE = ["patient_id", "site", "age", "female", "bmi", "ckd", "diabetes", "severity", "baseline_sbp", *world.MARKERS]


def main():
    seed, out = parse_args(__doc__)
    registry = world.patients(seed, "registry")
    columns = [*BASELINE, "treated", world.MEDIATOR, "sbp_change_12w"]
    digits = {"bmi": 1, "severity": 3, "baseline_sbp": 0, world.MEDIATOR: 1, "sbp_change_12w": 1}
    write_csv(out / "registry.csv", columns, [registry[c] for c in columns], digits=digits)
    new = world.patients(seed, "new")
    write_csv(out / "new_patients.csv", BASELINE, [new[c] for c in BASELINE], digits=digits)


if __name__ == "__main__":
    main()
