# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of pharmacy-virtual-screening (withheld). Prints the grade as JSON."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from gradelib import Fail, Grader, finite_number, linear, number_at, report_numbers  # noqa: E402

grader = Grader("pharmacy-virtual-screening")
ws = grader.workspace
screen = world.library(grader.seed, "library")
truth = dict(zip(screen["compound_id"], screen["pic50"]))
TOP_PICKS = 30
METRICS = "results/metrics.json"
REPORTED = ["expected_rmse_new_scaffolds", "cv_scheme", "excluded_features"]


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

grader.deliverables(0.08)
grader.reproducibility(0.08)


@grader.part("library_ranking", 0.22)
def _():
    predicted, actual = load_predictions()
    rho = spearman(predicted, actual)
    return linear(rho, oracle_rho - 0.06, 0.3), f"Spearman {rho:.2f} on new scaffolds (planted SAR alone: {oracle_rho:.2f})"


@grader.part("library_rmse", 0.12)
def _():
    predicted, actual = load_predictions()
    rmse = float(np.sqrt(np.mean((predicted - actual) ** 2)))
    return linear(rmse, 1.1 * oracle_rmse, float(actual.std())), f"RMSE {rmse:.2f} (planted SAR alone {oracle_rmse:.2f}, library sd {actual.std():.2f})"


@grader.part("top_picks_enrichment", 0.12)
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


@grader.part("leakage_trap_avoided", 0.14)
def _():
    metrics = ws.json_object("results/metrics.json", ["excluded_features"])
    excluded = metrics["excluded_features"]
    flagged = isinstance(excluded, list) and world.LEAK in excluded
    predicted, actual = load_predictions()
    bias = float(np.mean(predicted - actual))
    reason = f"{world.LEAK} {'excluded' if flagged else 'not excluded'}; mean prediction bias {bias:+.2f}"
    return 0.5 * flagged + 0.5 * linear(abs(bias), 0.25, 0.8), reason


@grader.part("honest_error_estimate", 0.14)
def _():
    expected = number_at(ws.json_object("results/metrics.json"), "expected_rmse_new_scaffolds", "results/metrics.json")
    if expected <= 0:
        raise Fail("expected_rmse_new_scaffolds must be positive")
    predicted, actual = load_predictions()
    rmse = float(np.sqrt(np.mean((predicted - actual) ** 2)))
    return linear(abs(np.log(expected / rmse)), 0.12, 0.5), f"expected RMSE {expected:.2f}, realised {rmse:.2f}"


@grader.part("results_consistent", 0.05)
def _():
    """top_picks are the 30 best of predictions.csv; ablation.json's first variant is `chosen` with rmse equal to
    expected_rmse_new_scaffolds, and every variant gives an rmse."""
    metrics = ws.json_object(METRICS, ["top_picks", "expected_rmse_new_scaffolds"])
    table = ws.csv_numeric("results/predictions.csv", "compound_id", ("predicted_pic50",))
    best = sorted(table, key=lambda c: -table[c][0])[:TOP_PICKS]
    picks = metrics["top_picks"] if isinstance(metrics["top_picks"], list) else []
    checks = {f"top_picks = the {TOP_PICKS} highest predicted_pic50": sorted(map(str, picks)) == sorted(best)}
    expected = finite_number(metrics["expected_rmse_new_scaffolds"], f"{METRICS} expected_rmse_new_scaffolds")
    variants = ws.json_object("results/ablation.json", ["variants"])["variants"]
    if not isinstance(variants, list) or len(variants) < 2 or not all(isinstance(v, dict) for v in variants):
        raise Fail("results/ablation.json: variants is not a list of at least two objects")
    rmses = [v.get("rmse") for v in variants]
    checks["ablation variant chosen first, rmse = expected_rmse_new_scaffolds"] = (
        variants[0].get("name") == "chosen"
        and isinstance(rmses[0], (int, float))
        and abs(rmses[0] - expected) <= 1e-3 * max(1.0, expected)
    )
    checks["every ablation variant gives its rmse"] = all(
        isinstance(r, (int, float)) and not isinstance(r, bool) and np.isfinite(r) for r in rmses
    )
    failed = [name for name, ok in checks.items() if not ok]
    return sum(checks.values()) / len(checks), "consistent" if not failed else "not so: " + "; ".join(failed)


@grader.part("report_numbers", 0.05)
def _():
    return report_numbers(ws, "research_report.md", METRICS, REPORTED)


grader.emit()
