# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of finance-garch-volatility (withheld). Prints the grade as JSON."""

import functools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from genlib import business_dates, stream  # noqa: E402
from gradelib import Fail, Grader, linear, number_at  # noqa: E402

grader = Grader("finance-garch-volatility")
truth = world.truth(grader.seed)
ws = grader.workspace
returns = world.simulate(truth, stream(grader.seed, "history"), world.N_RETURNS)


def load_params():
    raw = ws.json_object("results/garch_params.json")
    params = {key: number_at(raw, key, "results/garch_params.json") for key in ("omega", "alpha", "beta", "nu", "mu")}
    if params["omega"] <= 0 or params["alpha"] < 0 or params["beta"] < 0 or params["alpha"] + params["beta"] >= 1:
        raise Fail("results/garch_params.json: need omega > 0, alpha >= 0, beta >= 0, alpha + beta < 1")
    return params


@functools.cache
def fresh():
    """Fresh returns from the true model, and the QLIKE of the true filter and of a constant variance on them."""
    returns = world.simulate(truth, stream(grader.seed, "fresh"), 6000)
    best = world.qlike(world.variance_path(truth, returns)[0], returns, truth["mu"])
    constant = world.qlike(np.full(returns.size, truth["daily_vol"] ** 2), returns, truth["mu"])
    return returns, best, constant


grader.deliverables(0.15)


@grader.part("parameter_accuracy", 0.25)
def _():
    p = load_params()
    persistence_error = abs(p["alpha"] + p["beta"] - truth["alpha"] - truth["beta"])
    alpha_error = abs(p["alpha"] - truth["alpha"])
    vol = np.sqrt(p["omega"] / (1 - p["alpha"] - p["beta"]))
    vol_error = abs(vol / truth["daily_vol"] - 1)
    nu_error = abs(np.log(max(p["nu"], 2.01) / truth["nu"]))
    parts = [linear(persistence_error, 0.02, 0.08), linear(alpha_error, 0.015, 0.06), linear(vol_error, 0.05, 0.3)]
    parts.append(linear(nu_error, 0.25, 1.0))
    reason = (
        f"persistence error {persistence_error:.3f}, alpha error {alpha_error:.3f}, "
        f"unconditional vol error {100 * vol_error:.1f} %, log nu error {nu_error:.2f}"
    )
    return float(np.mean(parts)), reason


@grader.part("misprints_found", 0.2)
def _():
    metrics = ws.json_object("results/metrics.json", ["bad_tick_dates"])
    reported = metrics["bad_tick_dates"]
    if not isinstance(reported, list):
        raise Fail("bad_tick_dates is not a list")
    dates = business_dates("2014-01-02", world.N_RETURNS + 1)
    planted = {dates[day] for day in truth["misprint_days"]}
    hits = sum(1 for day in planted if day in {str(item)[:10] for item in reported})
    precision = hits / len(reported) if reported else 0.0
    recall = hits / len(planted)
    f1 = 2 * precision * recall / (precision + recall) if hits else 0.0
    return f1, f"{hits} of {len(planted)} misprinted closes found, {len(reported)} reported"


@grader.part("out_of_sample_qlike", 0.3)
def _():
    p = load_params()
    returns, best, constant = fresh()
    agent = world.qlike(world.variance_path(p, returns)[0], returns, truth["mu"])
    skill = (constant - agent) / (constant - best)
    return skill, f"QLIKE {agent:.4f} vs {best:.4f} (true model) and {constant:.4f} (constant variance)"


@grader.part("next_day_forecast", 0.1)
def _():
    reported = number_at(ws.json_object("results/metrics.json"), "forecast_next_day_vol", "results/metrics.json")
    _, h_next = world.variance_path(truth, returns)
    true_vol = np.sqrt(h_next * 252)
    error = abs(reported / true_vol - 1)
    return linear(error, 0.05, 0.35), f"forecast {reported:.4f} vs {true_vol:.4f} annualised from the true model"


grader.emit()
