# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of demo-volatility (withheld): the return statistics against those of the written prices. Prints JSON."""

import math
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import world  # noqa: E402
from demolib import Grader, linear, number, read_json_object  # noqa: E402

grader = Grader("demo-volatility")
sample = world.sample_statistics(grader.seed)
grader.deliverables(0.3)


@grader.part("volatility_accuracy", 0.4)
def _(root):
    daily = number(read_json_object(root, "results.json"), "daily_volatility", "results.json")
    error = abs(daily / sample["volatility"] - 1)
    return linear(error, 0.01, 0.2), f"daily volatility off by {100 * error:.1f} %"


@grader.part("annualised_consistent", 0.1)
def _(root):
    results = read_json_object(root, "results.json")
    annual = number(results, "annualised_volatility", "results.json")
    error = abs(annual / (sample["volatility"] * math.sqrt(252)) - 1)
    return linear(error, 0.02, 0.2), f"annualised volatility off by {100 * error:.1f} % (252 trading days)"


@grader.part("mean_return_accuracy", 0.2)
def _(root):
    mean = number(read_json_object(root, "results.json"), "mean_daily_return", "results.json")
    error = abs(mean - sample["mean"])
    return linear(error, 1e-5, 5e-4), f"|mean daily log return error| {error:.2e}"


grader.emit()
