# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""The planted truth of demo-volatility: a daily drift and volatility, and the closing prices they produce."""

import numpy as np

from demolib import stream

DAYS = 251


def truth(seed):
    rng = stream(seed, "truth")
    return {"drift": float(rng.uniform(-0.0005, 0.001)), "volatility": float(rng.uniform(0.008, 0.025))}


def closes(seed):
    """Closing prices as written (two decimals), first day at about 100."""
    planted = truth(seed)
    rng = stream(seed, "prices")
    log_returns = rng.normal(planted["drift"], planted["volatility"], DAYS - 1)
    path = 100.0 * np.exp(np.concatenate([[0.0], np.cumsum(log_returns)]))
    return [round(float(price), 2) for price in path]


def sample_statistics(seed):
    """What a correct analysis of the written prices finds: the mean and standard deviation of daily log returns."""
    returns = np.diff(np.log(np.array(closes(seed))))
    return {"mean": float(returns.mean()), "volatility": float(returns.std(ddof=1)), "days": DAYS}
