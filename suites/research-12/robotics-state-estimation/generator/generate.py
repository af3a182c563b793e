# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the inputs of robotics-state-estimation for one seed: landmarks, three runs, truth of the first only."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import world  # noqa: E402
from genlib import parse_args, write_csv, write_json  # noqa: E402


def main():
    seed, out = parse_args(__doc__)
    truth = world.truth(seed)
    marks = world.landmarks(seed)
    write_csv(out / "landmarks.csv", ["landmark_id", "x", "y"], [list(range(1, len(marks) + 1)), marks[:, 0], marks[:, 1]], digits=3)
    for name in world.RUNS:
        data = world.run(truth, seed, name)
        odometry = data["odometry"]
        write_csv(out / f"{name}_odometry.csv", ["t", "v", "omega"], [odometry[:, 0], odometry[:, 1], odometry[:, 2]], digits={"t": 1, "v": 5, "omega": 5})
        obs = data["observations"]
        write_csv(out / f"{name}_observations.csv", ["t", "landmark_id", "range", "bearing"],
                  [[o[0] for o in obs], [o[1] for o in obs], [o[2] for o in obs], [o[3] for o in obs]], digits={"t": 1, "range": 4, "bearing": 5})
        x0, y0, th0 = data["pose"][0]
        write_json(out / f"{name}_start.json", {"x": round(float(x0), 4), "y": round(float(y0), 4), "theta": round(float(th0), 5)})
        if name == "calibration":
            pose = data["pose"][1:]
            write_csv(out / "calibration_truth.csv", ["t", "x", "y", "theta"], [odometry[:, 0], pose[:, 0], pose[:, 1], pose[:, 2]], digits={"t": 1, "x": 4, "y": 4, "theta": 5})


if __name__ == "__main__":
    main()
