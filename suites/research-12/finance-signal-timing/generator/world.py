# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""finance-signal-timing: the planted world (withheld).

Six assets, daily. Standardised next-day returns load on AR(1) features; at a planted break day the loadings change
(sentiment fades, carry switches on). `flow_imbalance_5d` is a centred average of order flow, so it contains the next
day's return: it looks predictive only because future data leaks into it. Live (fresh) data computes it from trailing
days only, where it predicts nothing.
"""

import numpy as np
from scipy.signal import lfilter

from genlib import stream

ASSETS = [f"A{i + 1}" for i in range(6)]
N_DAYS = 1500
HOLDOUT_DAYS = 250
COST = 0.0005  # 5 bps per unit of position change
FEATURES = ["sentiment", "carry", "value", "flow_imbalance_5d"]
LEAK_FEATURE = "flow_imbalance_5d"
PERSISTENCE = {"sentiment": 0.85, "carry": 0.97, "value": 0.995}


def truth(seed):
    r = stream(seed, "truth")
    return {
        "break_day": int(r.integers(850, 1050)),
        "beta_pre": {"sentiment": float(r.uniform(0.09, 0.13)), "carry": 0.0, "value": 0.0},
        "beta_post": {"sentiment": float(r.uniform(0.02, 0.04)), "carry": float(r.uniform(0.07, 0.10)), "value": 0.0},
        "vols": r.uniform(0.008, 0.02, len(ASSETS)),
    }


def _ar1(rng, rho, n_days, n_assets):
    shocks = rng.standard_normal((n_days + 200, n_assets)) * np.sqrt(1 - rho**2)
    series = lfilter([1.0], [1.0, -rho], shocks, axis=0)
    return series[200:]


def simulate(world, rng, n_days, live=False):
    """Features at close of day t and the return from close t to close t+1 (`returns[t]`).

    `live=False`: the historical sample with the break; `live=True`: fresh data in the post-break regime, with the
    order-flow feature computed as it would be in real time (trailing window).
    """
    n = len(ASSETS)
    x = {name: _ar1(rng, rho, n_days, n) for name, rho in PERSISTENCE.items()}
    after = np.ones(n_days, bool) if live else (np.arange(n_days) >= world["break_day"])
    signal = np.zeros((n_days, n))
    for name in PERSISTENCE:
        beta = np.where(after, world["beta_post"][name], world["beta_pre"][name])
        signal += beta[:, None] * x[name]
    standardised = signal + rng.standard_normal((n_days, n))
    returns = world["vols"] * standardised
    # Order flow printed on day t follows the price move that ends on day t (returns[t-1]).
    flow = np.vstack([np.zeros((1, n)), standardised[:-1]]) + 0.7 * rng.standard_normal((n_days, n))
    window = np.full((n_days, n), np.nan)
    for t in range(n_days):
        lo, hi = (t - 4, t + 1) if live else (t - 2, t + 3)
        window[t] = flow[max(0, lo) : min(n_days, hi)].mean(axis=0)
    x[LEAK_FEATURE] = window / np.nanstd(window)
    return x, returns


def positions(strategy, features):
    score = sum(weight * features[name] for name, weight in strategy["weights"].items())
    target = np.clip(strategy["scale"] * score, -1.0, 1.0)
    halflife = strategy["smoothing_halflife"]
    if halflife <= 0:
        return target
    decay = 0.5 ** (1.0 / halflife)
    return lfilter([1 - decay], [1.0, -decay], target, axis=0)


def daily_pnl(strategy, features, returns, cost=COST):
    """Net and gross daily P&L of the equal-weight book; P&L[t] is earned from close t to close t+1."""
    pos = positions(strategy, features)
    turnover = np.abs(np.diff(np.vstack([np.zeros((1, pos.shape[1])), pos]), axis=0))
    gross = (pos * returns).mean(axis=1)
    net = gross - cost * turnover.mean(axis=1)
    return net, gross


def sharpe(pnl):
    pnl = np.asarray(pnl)
    sd = pnl.std()
    return float(pnl.mean() / sd * np.sqrt(252)) if sd > 0 else 0.0
