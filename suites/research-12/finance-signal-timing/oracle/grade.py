# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of finance-signal-timing (withheld). Prints the grade as JSON."""

import functools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from genlib import business_dates, stream  # noqa: E402
from gradelib import Fail, Grader, finite_number, linear, number_at, report_numbers  # noqa: E402

grader = Grader("finance-signal-timing")
truth = world.truth(grader.seed)
ws = grader.workspace


def load_strategy():
    raw = ws.json_object("results/strategy.json", ["weights", "scale", "smoothing_halflife"])
    weights = raw["weights"]
    if not isinstance(weights, dict) or not weights:
        raise Fail("results/strategy.json: weights is not a non-empty object")
    unknown = [name for name in weights if name not in world.FEATURES]
    if unknown:
        raise Fail(f"results/strategy.json: unknown feature(s) {', '.join(unknown)}")
    strategy = {
        "weights": {name: finite_number(value, f"weights.{name}") for name, value in weights.items()},
        "scale": finite_number(raw["scale"], "scale"),
        "smoothing_halflife": finite_number(raw["smoothing_halflife"], "smoothing_halflife"),
    }
    if strategy["scale"] <= 0 or not 0 <= strategy["smoothing_halflife"] <= 250:
        raise Fail("results/strategy.json: scale must be > 0 and smoothing_halflife within [0, 250]")
    return strategy


@functools.cache
def history():
    features, returns = world.simulate(truth, stream(grader.seed, "history"), world.N_DAYS)
    return {name: np.round(values, 4) for name, values in features.items()}, returns


grader.deliverables(0.1)


@grader.part("regime_break", 0.15)
def _():
    metrics = ws.json_object("results/metrics.json", ["regime_break_date"])
    dates = business_dates("2017-01-02", world.N_DAYS)
    reported = str(metrics["regime_break_date"])[:10]
    if reported not in dates:
        raise Fail(f'regime_break_date "{reported}" is not a trading date of the sample')
    error = abs(dates.index(reported) - truth["break_day"])
    return linear(error, 40, 200), f"break reported {error} trading days from the planted break"


@grader.part("leakage_trap_avoided", 0.15)
def _():
    strategy = load_strategy()
    metrics = ws.json_object("results/metrics.json", ["excluded_features"])
    excluded = metrics["excluded_features"]
    flagged = isinstance(excluded, list) and world.LEAK_FEATURE in excluded
    weights = np.abs(list(strategy["weights"].values()))
    leak_weight = abs(strategy["weights"].get(world.LEAK_FEATURE, 0.0))
    unused = leak_weight <= 0.02 * max(weights.max(), 1e-12)
    reason = f"{world.LEAK_FEATURE} {'flagged' if flagged else 'not flagged'} as leaking; "
    reason += "not traded" if unused else f"traded with weight {leak_weight:.3g}"
    return 0.5 * flagged + 0.5 * unused, reason


@functools.cache
def live_data(label, n_days):
    return world.simulate(truth, stream(grader.seed, label), n_days, live=True)


def live_sharpe(strategy, label, n_days=4000):
    features, returns = live_data(label, n_days)
    return world.sharpe(world.daily_pnl(strategy, features, returns)[0])


@functools.cache
def attainable_live_sharpe():
    """Live net Sharpe of what the sample allows when the leak and the break are known: the honest features' loadings
    refitted by least squares on the post-break training days, scale and smoothing tuned on separate fresh data."""
    features, returns = history()
    honest = [name for name in world.FEATURES if name != world.LEAK_FEATURE]
    train_end = world.N_DAYS - world.HOLDOUT_DAYS - 1
    standardised = returns / returns[:train_end].std(axis=0)
    window = slice(truth["break_day"], train_end)
    design = np.column_stack([features[name][window].ravel() for name in honest])
    loadings, *_ = np.linalg.lstsq(design, standardised[window].ravel(), rcond=None)
    candidates = [
        {"weights": dict(zip(honest, loadings)), "scale": scale, "smoothing_halflife": halflife}
        for scale in (2.0, 4.0, 8.0, 16.0)
        for halflife in (0.0, 1.0, 2.0, 4.0, 8.0)
    ]
    best = max(candidates, key=lambda candidate: live_sharpe(candidate, "oracle-tuning", 3000))
    return live_sharpe(best, "live")


@grader.part("out_of_sample_net_sharpe", 0.3)
def _():
    strategy = load_strategy()
    attainable, agent = attainable_live_sharpe(), live_sharpe(strategy, "live")
    reason = f"live net Sharpe {agent:.2f} vs {attainable:.2f} for post-break loadings refitted on the sample"
    return agent / attainable, reason


def holdout_replay(strategy):
    """Net and gross Sharpe and annual turnover of the strategy on the holdout, as the task text defines them."""
    features, returns = history()
    net, gross = world.daily_pnl(strategy, features, returns)
    positions = world.positions(strategy, features)
    turnover = np.abs(np.diff(np.vstack([np.zeros((1, positions.shape[1])), positions]), axis=0)).mean(axis=1)
    holdout = slice(world.N_DAYS - world.HOLDOUT_DAYS - 1, world.N_DAYS - 1)
    return world.sharpe(net[holdout]), world.sharpe(gross[holdout]), float(turnover[holdout].mean() * 252)


@grader.part("reported_holdout_replayed", 0.1)
def _():
    strategy = load_strategy()
    metrics = ws.json_object("results/metrics.json")
    keys = ("holdout_sharpe_net", "holdout_sharpe_gross", "annual_turnover")
    net, gross, turnover = (number_at(metrics, key, "results/metrics.json") for key in keys)
    replayed_net, replayed_gross, replayed_turnover = holdout_replay(strategy)
    scores = [
        linear(abs(net - replayed_net), 0.05, 0.5),
        linear(abs(gross - replayed_gross), 0.05, 0.5),
        linear(abs(turnover / max(replayed_turnover, 1e-9) - 1), 0.02, 0.25),
    ]
    reason = (
        f"reported net {net:.2f}, gross {gross:.2f}, turnover {turnover:.1f}; replayed from results/strategy.json: "
        f"net {replayed_net:.2f}, gross {replayed_gross:.2f}, turnover {replayed_turnover:.1f}"
    )
    return float(np.mean(scores)), reason


grader.reproducibility(0.1)


@grader.part("report_states_metrics", 0.1)
def _():
    keys = ["regime_break_date", "excluded_features", "holdout_sharpe_net", "holdout_sharpe_gross", "annual_turnover"]
    return report_numbers(ws, "research_report.md", "results/metrics.json", keys)


grader.emit()
