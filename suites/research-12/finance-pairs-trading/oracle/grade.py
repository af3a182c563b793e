# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""Grader of finance-pairs-trading (withheld). Prints the grade as JSON."""

import functools
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "generator"), str(HERE.parents[1] / "_lib")]

import numpy as np  # noqa: E402

import world  # noqa: E402
from genlib import stream  # noqa: E402
from gradelib import Fail, Grader, linear, number_at, report_numbers  # noqa: E402

grader = Grader("finance-pairs-trading")
truth = world.truth(grader.seed)
ws = grader.workspace
true_pairs = {frozenset((pair["x"], pair["y"])): pair for pair in truth["pairs"]}
FIELDS = ("hedge_ratio", "spread_mean", "spread_std", "entry_z", "exit_z", "half_life_days")


def load_rules():
    raw = ws.json("results/pairs.json")
    if not isinstance(raw, list):
        raise Fail("results/pairs.json is not a list of pair rules")
    if len(raw) > 5:
        raise Fail(f"results/pairs.json has {len(raw)} pairs; at most 5 are allowed")
    rules = []
    for i, entry in enumerate(raw):
        where = f"results/pairs.json[{i}]"
        if not isinstance(entry, dict) or entry.get("x") not in world.TICKERS or entry.get("y") not in world.TICKERS:
            raise Fail(f"{where}: x and y must be tickers S01..S16")
        rule = {"x": entry["x"], "y": entry["y"], **{key: number_at(entry, key, where) for key in FIELDS}}
        if rule["spread_std"] <= 0 or rule["entry_z"] <= rule["exit_z"] or rule["exit_z"] < 0:
            raise Fail(f"{where}: need spread_std > 0 and entry_z > exit_z >= 0")
        rules.append(rule)
    return rules


grader.deliverables(0.1)


@grader.part("pair_selection", 0.15)
def _():
    chosen = {frozenset((rule["x"], rule["y"])) for rule in load_rules()}
    hits = len(chosen & set(true_pairs))
    if not hits:
        return 0.0, f"none of the {len(true_pairs)} cointegrated pairs selected ({len(chosen)} selected)"
    precision, recall = hits / len(chosen), hits / len(true_pairs)
    return 2 * precision * recall / (precision + recall), f"{hits} of {len(true_pairs)} cointegrated pairs among {len(chosen)} selected"


@grader.part("hedge_ratio_and_half_life", 0.1)
def _():
    scores, notes = [], []
    for rule in load_rules():
        pair = true_pairs.get(frozenset((rule["x"], rule["y"])))
        if pair is None:
            continue
        gamma = rule["hedge_ratio"] if rule["y"] == pair["y"] else 1.0 / max(abs(rule["hedge_ratio"]), 1e-9)
        gamma_error = abs(gamma / pair["gamma"] - 1)
        half_life_error = abs(np.log(max(rule["half_life_days"], 1e-3) / pair["half_life"]))
        scores.append(0.5 * linear(gamma_error, 0.03, 0.2) + 0.5 * linear(half_life_error, 0.3, 1.0))
        notes.append(f"{rule['y']}/{rule['x']}: hedge error {100 * gamma_error:.1f} %, half-life {rule['half_life_days']:.1f} vs {pair['half_life']:.1f}")
    if not scores:
        raise Fail("no cointegrated pair selected")
    return sum(scores) / len(true_pairs), "; ".join(notes)


@grader.part("no_spurious_pairs", 0.2)
def _():
    """Every traded pair that is not cointegrated trades noise: each costs half the part; the highly correlated decoy,
    the trap the task announces, costs all of it."""
    chosen = {frozenset((rule["x"], rule["y"])) for rule in load_rules()}
    spurious = frozenset(truth["spurious"])
    if spurious in chosen:
        return 0.0, f"{'/'.join(sorted(spurious))} selected: highly correlated but not cointegrated"
    false = sorted("/".join(sorted(pair)) for pair in chosen - set(true_pairs))
    if false:
        return 1.0 - 0.5 * len(false), f"not cointegrated but selected: {', '.join(false)}"
    return 1.0, "every selected pair is cointegrated; the correlated decoy was not traded"


@functools.cache
def fresh_and_oracle():
    """Fresh continuation of the market, and the P&L on it of the planted pairs with thresholds tuned on other fresh data."""
    _, state = world.simulate(truth, stream(grader.seed, "history"), world.N_DAYS)
    tuning, _ = world.simulate(truth, stream(grader.seed, "oracle-tuning"), 2000, state)
    fresh, _ = world.simulate(truth, stream(grader.seed, "fresh"), 2000, state)

    def oracle_rules(entry, exit_):
        return [{"x": p["x"], "y": p["y"], "hedge_ratio": p["gamma"], "spread_mean": p["intercept"],
                 "spread_std": p["spread_sd"], "entry_z": entry, "exit_z": exit_} for p in truth["pairs"]]

    grid = [(entry, exit_) for entry in (0.75, 1.0, 1.5, 2.0) for exit_ in (0.0, 0.25, 0.5)]
    best = max(grid, key=lambda g: sum(world.pair_pnl(tuning, rule).sum() for rule in oracle_rules(*g)))
    return fresh, sum(world.pair_pnl(fresh, rule).sum() for rule in oracle_rules(*best))


@grader.part("out_of_sample_pnl", 0.2)
def _():
    rules = load_rules()
    fresh, oracle = fresh_and_oracle()
    agent = sum(world.pair_pnl(fresh, rule).sum() for rule in rules)
    return agent / oracle, f"fresh-data P&L {agent:.3f} vs {oracle:.3f} for the planted pairs (log-spread units)"


@functools.cache
def history():
    """The sample's log prices as data/prices.csv records them (four decimals)."""
    log_prices, _ = world.simulate(truth, stream(grader.seed, "history"), world.N_DAYS)
    return np.log(np.round(np.exp(log_prices), 4))


@grader.part("metrics_replayed", 0.05)
def _():
    rules = load_rules()
    metrics = ws.json_object("results/metrics.json")
    where = "results/metrics.json"
    reported_pnl, reported_sharpe = number_at(metrics, "in_sample_pnl", where), number_at(metrics, "in_sample_sharpe", where)
    selected = number_at(metrics, "n_pairs_selected", where)
    daily = sum((world.pair_pnl(history(), rule) for rule in rules), np.zeros(world.N_DAYS))
    pnl = float(daily.sum())
    sharpe = float(daily.mean() / daily.std() * np.sqrt(252)) if daily.std() > 0 else 0.0
    scores = [
        linear(abs(reported_pnl - pnl), 0.01 + 0.01 * abs(pnl), 0.1 + 0.1 * abs(pnl)),
        linear(abs(reported_sharpe - sharpe), 0.05, 0.5),
        float(selected == len(rules)),
    ]
    reason = (
        f"reported in-sample P&L {reported_pnl:.3f}, Sharpe {reported_sharpe:.2f}, {selected:g} pairs; the rules in "
        f"results/pairs.json replayed on the sample: P&L {pnl:.3f}, Sharpe {sharpe:.2f}, {len(rules)} pairs"
    )
    return float(np.mean(scores)), reason


grader.reproducibility(0.1)


@grader.part("report_states_metrics", 0.1)
def _():
    keys = ["n_pairs_tested", "n_pairs_selected", "in_sample_sharpe", "in_sample_pnl"]
    return report_numbers(ws, "research_report.md", "results/metrics.json", keys)


grader.emit()
