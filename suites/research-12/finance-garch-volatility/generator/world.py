# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""finance-garch-volatility: the planted world (withheld).

Daily returns follow a GARCH(1,1) with Student-t innovations. The recorded closing prices contain a few misprints:
on a planted day the print is off by 8-15 % and the next day is correct again, which creates two huge, opposite
returns that are not volatility. Careful work finds and repairs them before fitting.
"""

import numpy as np
from scipy.signal import lfilter

from genlib import stream

N_RETURNS = 2500
HOLDOUT = 500
MEAN = 0.0003


def truth(seed):
    r = stream(seed, "truth")
    alpha = float(r.uniform(0.06, 0.11))
    beta = float(min(r.uniform(0.85, 0.91), 0.975 - alpha))
    daily_vol = float(r.uniform(0.009, 0.013))
    misprints = sorted(int(day) for day in r.choice(np.arange(150, N_RETURNS - 50, 40), size=4, replace=False))
    return {
        "alpha": alpha,
        "beta": beta,
        "omega": daily_vol**2 * (1 - alpha - beta),
        "nu": float(r.uniform(5.0, 8.0)),
        "mu": MEAN,
        "daily_vol": daily_vol,
        "misprint_days": misprints,  # index into prices: the misprinted close
        "misprint_sizes": [float(r.choice([-1, 1]) * r.uniform(0.08, 0.15)) for _ in misprints],
    }


def variance_path(params, returns):
    """One-step-ahead conditional variances h[t] of returns[t], and the forecast for the day after the last."""
    eps2 = (np.asarray(returns) - params["mu"]) ** 2
    h0 = params["omega"] / max(1e-6, 1 - params["alpha"] - params["beta"])
    drive = params["omega"] + params["alpha"] * eps2
    h_next = lfilter([1.0], [1.0, -params["beta"]], drive, zi=[params["beta"] * h0])[0]
    h = np.concatenate([[h0], h_next[:-1]])
    return h, float(h_next[-1])


def simulate(world, rng, n):
    z = rng.standard_t(world["nu"], n + 500) * np.sqrt((world["nu"] - 2) / world["nu"])
    returns = np.empty(n + 500)
    h = world["daily_vol"] ** 2
    for t in range(n + 500):
        returns[t] = world["mu"] + np.sqrt(h) * z[t]
        h = world["omega"] + world["alpha"] * (returns[t] - world["mu"]) ** 2 + world["beta"] * h
    return returns[500:]


def recorded_prices(world, returns):
    prices = 100.0 * np.concatenate([[1.0], np.cumprod(1 + returns)])
    recorded = prices.copy()
    for day, size in zip(world["misprint_days"], world["misprint_sizes"]):
        recorded[day] = prices[day] * (1 + size)
    return prices, recorded


def qlike(h, returns, mu):
    return float(np.mean((returns - mu) ** 2 / h + np.log(h)))
