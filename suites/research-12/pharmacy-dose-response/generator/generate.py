# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Writes the inputs of pharmacy-dose-response for one seed: plate reads and compound properties."""

import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[2] / "_lib")]

import world  # noqa: E402
from genlib import parse_args, stream, write_csv  # noqa: E402


def main():
    seed, out = parse_args(__doc__)
    truth = world.truth(seed)
    rows = world.wells(truth, stream(seed, "assay"))
    columns = list(zip(*rows))
    concentration = ["" if value is None else f"{value:.4e}" for value in columns[3]]
    write_csv(out / "assay.csv", ["plate", "well", "sample", "concentration_M", "rlu"],
              [columns[0], columns[1], columns[2], concentration, columns[4]], digits={"rlu": 1})
    solubility = [f"{10 ** (value + 6):.2f}" for value in truth["solubility_log"]]
    write_csv(out / "compounds.csv", ["compound", "solubility_uM"], [world.COMPOUNDS, solubility])


if __name__ == "__main__":
    main()
