# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of finance-garch-volatility (withheld). Prints the grade as JSON."""

import functools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402
from scipy.special import gammaln  # noqa: E402

import world  # noqa: E402
from genlib import business_dates, stream  # noqa: E402
from gradelib import Fail, Grader, linear, number_at, report_numbers  # noqa: E402

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


GAUSSIAN_NU = 200.0  # from here on a Student-t is a normal distribution for all practical purposes


def log_score(params, returns):
    """Mean log predictive density of `returns` under the model: GARCH(1,1) variances, Student-t innovations with
    `nu` degrees of freedom scaled to unit variance (normal when nu >= GAUSSIAN_NU)."""
    h = world.variance_path(params, returns)[0]
    eps, nu = returns - params["mu"], params["nu"]
    if nu >= GAUSSIAN_NU:
        return float(np.mean(-0.5 * (np.log(2 * np.pi * h) + eps**2 / h)))
    density = gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(np.pi * (nu - 2) * h)
    return float(np.mean(density - (nu + 1) / 2 * np.log1p(eps**2 / ((nu - 2) * h))))


@functools.cache
def fresh_log_scores():
    """The true model's log score on the fresh returns, and a constant-variance normal model's."""
    returns = fresh()[0]
    constant = {"mu": truth["mu"], "omega": truth["daily_vol"] ** 2, "alpha": 0.0, "beta": 0.0, "nu": GAUSSIAN_NU}
    return log_score(truth, returns), log_score(constant, returns)


grader.deliverables(0.1)


@grader.part("parameter_accuracy", 0.15)
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


@grader.part("misprints_found", 0.15)
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


@grader.part("out_of_sample_qlike", 0.15)
def _():
    p = load_params()
    returns, best, constant = fresh()
    agent = world.qlike(world.variance_path(p, returns)[0], returns, truth["mu"])
    skill = (constant - agent) / (constant - best)
    return skill, f"QLIKE {agent:.4f} vs {best:.4f} (true model) and {constant:.4f} (constant variance)"


@grader.part("out_of_sample_log_score", 0.15)
def _():
    p = load_params()
    if p["nu"] <= 2:
        raise Fail("results/garch_params.json: nu must be above 2 (a Student-t with finite variance)")
    best, constant = fresh_log_scores()
    agent = log_score(p, fresh()[0])
    skill = (agent - constant) / (best - constant)
    reason = f"mean log density of fresh returns {agent:.4f} vs {best:.4f} (true model) and {constant:.4f} (constant normal)"
    return skill, reason


@grader.part("next_day_forecast", 0.05)
def _():
    reported = number_at(ws.json_object("results/metrics.json"), "forecast_next_day_vol", "results/metrics.json")
    _, h_next = world.variance_path(truth, returns)
    true_vol = np.sqrt(h_next * 252)
    error = abs(reported / true_vol - 1)
    return linear(error, 0.05, 0.35), f"forecast {reported:.4f} vs {true_vol:.4f} annualised from the true model"


@grader.part("metrics_match_parameters", 0.05)
def _():
    """The metrics are what the reported parameters imply: persistence, unconditional volatility, and the next-day
    forecast and holdout QLIKE of the parameters run over the sample's returns as they should have been recorded."""
    p = load_params()
    metrics = ws.json_object("results/metrics.json")
    where = "results/metrics.json"
    persistence = p["alpha"] + p["beta"]
    unconditional = np.sqrt(252 * p["omega"] / (1 - persistence))
    h, h_next = world.variance_path(p, returns)
    holdout = slice(returns.size - world.HOLDOUT, returns.size)
    qlike = world.qlike(h[holdout], returns[holdout], p["mu"])
    checks = [
        ("persistence", persistence, 0.005, 0.03, False),
        ("unconditional_annual_vol", unconditional, 0.02, 0.15, True),
        ("forecast_next_day_vol", np.sqrt(252 * h_next), 0.03, 0.2, True),
        ("holdout_qlike", qlike, 0.02, 0.1, False),
    ]
    scores, notes = [], []
    for key, implied, best, worst, relative in checks:
        reported = number_at(metrics, key, where)
        gap = abs(reported / implied - 1) if relative else abs(reported - implied)
        scores.append(linear(gap, best, worst))
        notes.append(f"{key} {reported:.4g} vs {implied:.4g}")
    return float(np.mean(scores)), "reported vs implied by results/garch_params.json: " + ", ".join(notes)


grader.reproducibility(0.1)


@grader.part("report_states_metrics", 0.1)
def _():
    keys = ["persistence", "unconditional_annual_vol", "forecast_next_day_vol", "bad_tick_dates", "holdout_qlike"]
    return report_numbers(ws, "research_report.md", "results/metrics.json", keys)


grader.emit()
