# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of demo-potency (withheld): the EC50 and Hill slope against the planted truth. Prints the grade as JSON."""

import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import world  # noqa: E402
from demolib import Fail, Grader, linear, number, read_json_object  # noqa: E402

grader = Grader("demo-potency")
truth = world.truth(grader.seed)
grader.deliverables(0.3)


@grader.part("ec50_accuracy", 0.5)
def _(root):
    ec50 = number(read_json_object(root, "results.json"), "ec50_uM", "results.json")
    if ec50 <= 0:
        raise Fail(f"results.json: ec50_uM is {ec50}, not a concentration")
    error = abs(math.log10(ec50) - truth["log10_ec50_uM"])
    return linear(error, 0.05, 0.5), f"|log10 EC50 error| {error:.3f}"


@grader.part("hill_accuracy", 0.2)
def _(root):
    hill = number(read_json_object(root, "results.json"), "hill_slope", "results.json")
    error = abs(hill - truth["hill"])
    return linear(error, 0.1, 1.0), f"|Hill slope error| {error:.3f}"


grader.emit()
