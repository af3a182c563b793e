# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of finance-min-variance (withheld). Prints the grade as JSON.

The out-of-sample measure is the portfolio's variance under the true covariance, i.e. its expected realised variance
on any fresh data from the same market.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from gradelib import Fail, Grader, finite_number, linear, number_at, report_numbers  # noqa: E402

grader = Grader("finance-min-variance")
truth = world.truth(grader.seed)
sigma = truth["covariance"]
ws = grader.workspace
TOLERANCE = 1e-4


def load_weights(check_constraints=True):
    raw = ws.json_object("results/weights.json")
    unknown = [key for key in raw if key not in world.TICKERS]
    if unknown:
        raise Fail(f"results/weights.json: unknown asset(s) {', '.join(unknown[:5])}")
    w = np.array([finite_number(raw.get(t, 0.0), f"weight of {t}") for t in world.TICKERS])
    if check_constraints:
        if abs(w.sum() - 1) > TOLERANCE:
            raise Fail(f"weights sum to {w.sum():.6f}, not 1")
        if w.min() < world.LOWER - TOLERANCE or w.max() > world.UPPER + TOLERANCE:
            raise Fail(f"weights outside [{world.LOWER}, {world.UPPER}] (min {w.min():.3f}, max {w.max():.3f})")
    return w


def annual_vol(w):
    return float(np.sqrt(w @ sigma @ w * 252))


optimal = world.min_variance(sigma)
equal = np.full(world.N_ASSETS, 1.0 / world.N_ASSETS)

grader.deliverables(0.1)


@grader.part("constraints_met", 0.05)
def _():
    load_weights()
    return 1.0, f"fully invested, every weight within [{world.LOWER}, {world.UPPER}]"


@grader.part("true_out_of_sample_variance", 0.25)
def _():
    w = load_weights()
    agent, best, naive = annual_vol(w) ** 2, annual_vol(optimal) ** 2, annual_vol(equal) ** 2
    skill = (naive - agent) / (naive - best)
    return skill, f"true annual vol {np.sqrt(agent):.4f}; optimum {np.sqrt(best):.4f}; equal weight {np.sqrt(naive):.4f}"


# A volatility measured on N_DAYS days has a relative standard error of about 1 / sqrt(2 N_DAYS): no forecast from
# the sample can be expected to do better; one a quarter off has missed.
FORECAST_ERROR_BEST = 1 / np.sqrt(2 * world.N_DAYS)
FORECAST_ERROR_WORST = 0.25


@grader.part("ex_ante_vol_accuracy", 0.2)
def _():
    w = load_weights()
    predicted = number_at(ws.json_object("results/metrics.json"), "predicted_annual_vol", "results/metrics.json")
    if predicted <= 0:
        raise Fail("predicted_annual_vol must be positive")
    error = abs(np.log(predicted / annual_vol(w)))
    reason = f"predicted {predicted:.4f} vs true {annual_vol(w):.4f} for the submitted weights (log error {error:.3f})"
    return linear(error, FORECAST_ERROR_BEST, FORECAST_ERROR_WORST), reason


@grader.part("stale_assets_handled", 0.15)
def _():
    metrics = ws.json_object("results/metrics.json", ["stale_assets"])
    reported = metrics["stale_assets"]
    if not isinstance(reported, list):
        raise Fail("stale_assets is not a list")
    planted = {world.TICKERS[i] for i in truth["stale"]}
    hits = len(planted & {str(item) for item in reported})
    precision = hits / len(reported) if reported else 0.0
    detection = 2 * precision * (hits / len(planted)) / (precision + hits / len(planted)) if hits else 0.0
    w = load_weights(check_constraints=False)
    excess = sum(abs(w[i]) - abs(optimal[i]) for i in truth["stale"])
    exposure = linear(excess, 0.05, 0.3)
    return 0.5 * detection + 0.5 * exposure, f"{hits} of 2 thinly traded assets flagged; excess weight on them {excess:.3f}"


@grader.part("metrics_match_weights", 0.05)
def _():
    w = load_weights(check_constraints=False)
    metrics = ws.json_object("results/metrics.json")
    gross = number_at(metrics, "gross_exposure", "results/metrics.json")
    shrinkage = number_at(metrics, "shrinkage_intensity", "results/metrics.json")
    if not 0 <= shrinkage <= 1:
        raise Fail(f"shrinkage_intensity {shrinkage:g} is not within [0, 1]")
    actual = float(np.abs(w).sum())
    return linear(abs(gross - actual), 0.001, 0.05), f"gross_exposure {gross:.4f} vs {actual:.4f} from results/weights.json"


grader.reproducibility(0.1)


@grader.part("report_states_metrics", 0.1)
def _():
    keys = ["predicted_annual_vol", "stale_assets", "shrinkage_intensity", "gross_exposure"]
    return report_numbers(ws, "research_report.md", "results/metrics.json", keys)


grader.emit()
