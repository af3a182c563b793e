# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the inputs of robotics-push-planning for one seed: the pushing scenarios."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import world  # noqa: E402
from genlib import parse_args, write_json  # noqa: E402


def main():
    seed, out = parse_args(__doc__)
    write_json(out / "scenarios.json", world.scenarios(seed))


if __name__ == "__main__":
    main()
