# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of pharmacy-virtual-screening (withheld). Prints the grade as JSON."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from gradelib import Fail, Grader, linear, number_at  # noqa: E402

grader = Grader("pharmacy-virtual-screening")
ws = grader.workspace
screen = world.library(grader.seed, "library")
truth = dict(zip(screen["compound_id"], screen["pic50"]))
TOP_PICKS = 30


def ranks(values):
    return np.argsort(np.argsort(values))


def spearman(a, b):
    return float(np.corrcoef(ranks(a), ranks(b))[0, 1])


def load_predictions():
    table = ws.csv_numeric("results/predictions.csv", "compound_id", ("predicted_pic50",))
    missing = [c for c in truth if c not in table]
    if missing:
        raise Fail(f"results/predictions.csv lacks {len(missing)} library compounds (e.g. {missing[0]})")
    ids = list(truth)
    return np.array([table[c][0] for c in ids]), np.array([truth[c] for c in ids])


oracle_rho = spearman(screen["core"], screen["pic50"])
oracle_rmse = float(np.sqrt(np.mean((screen["core"] - screen["pic50"]) ** 2)))

grader.deliverables(0.15)


@grader.part("library_ranking", 0.25)
def _():
    predicted, actual = load_predictions()
    rho = spearman(predicted, actual)
    return linear(rho, oracle_rho - 0.06, 0.3), f"Spearman {rho:.2f} on new scaffolds (planted SAR alone: {oracle_rho:.2f})"


@grader.part("library_rmse", 0.15)
def _():
    predicted, actual = load_predictions()
    rmse = float(np.sqrt(np.mean((predicted - actual) ** 2)))
    return linear(rmse, 1.1 * oracle_rmse, float(actual.std())), f"RMSE {rmse:.2f} (planted SAR alone {oracle_rmse:.2f}, library sd {actual.std():.2f})"


@grader.part("top_picks_enrichment", 0.15)
def _():
    picks = ws.json_object("results/metrics.json", ["top_picks"])["top_picks"]
    if not isinstance(picks, list) or not picks:
        raise Fail("top_picks is not a non-empty list")
    picks = [str(p) for p in picks[:TOP_PICKS]]
    ids = np.array(list(truth))
    actual = np.array([truth[c] for c in ids])
    actives = set(ids[np.argsort(-actual)[: len(ids) // 10]])
    hits = sum(p in actives for p in picks)
    oracle_hits = sum(c in actives for c in screen["compound_id"][np.argsort(-screen["core"])[:TOP_PICKS]])
    chance = TOP_PICKS * len(actives) / len(ids)
    return linear(hits, 0.6 * oracle_hits, chance), f"{hits} of the top 10 % among {len(picks)} picks (planted SAR: {oracle_hits}, chance: {chance:.0f})"


@grader.part("leakage_trap_avoided", 0.15)
def _():
    metrics = ws.json_object("results/metrics.json", ["excluded_features"])
    excluded = metrics["excluded_features"]
    flagged = isinstance(excluded, list) and world.LEAK in excluded
    predicted, actual = load_predictions()
    bias = float(np.mean(predicted - actual))
    reason = f"{world.LEAK} {'excluded' if flagged else 'not excluded'}; mean prediction bias {bias:+.2f}"
    return 0.5 * flagged + 0.5 * linear(abs(bias), 0.25, 0.8), reason


@grader.part("honest_error_estimate", 0.15)
def _():
    expected = number_at(ws.json_object("results/metrics.json"), "expected_rmse_new_scaffolds", "results/metrics.json")
    if expected <= 0:
        raise Fail("expected_rmse_new_scaffolds must be positive")
    predicted, actual = load_predictions()
    rmse = float(np.sqrt(np.mean((predicted - actual) ** 2)))
    return linear(abs(np.log(expected / rmse)), 0.12, 0.5), f"expected RMSE {expected:.2f}, realised {rmse:.2f}"


grader.emit()
