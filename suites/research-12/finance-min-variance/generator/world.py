# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""finance-min-variance: the planted world (withheld).

Forty assets with a three-factor covariance and only 160 daily observations, so the sample covariance is noisy. Two
assets trade rarely: their recorded close is stale on most days, so their daily returns are mostly zero and their
measured correlation with everything else is far too low. A naive minimum-variance portfolio loads on them as if they
were diversifiers; their true covariance says otherwise.
"""

import numpy as np
from scipy.optimize import minimize

from genlib import stream

N_ASSETS = 40
N_DAYS = 160
LOWER, UPPER = -0.1, 0.2
TICKERS = [f"A{i + 1:02d}" for i in range(N_ASSETS)]


def truth(seed):
    r = stream(seed, "truth")
    loadings = np.column_stack([r.normal(1.0, 0.3, N_ASSETS), r.normal(0, 0.5, N_ASSETS), r.normal(0, 0.5, N_ASSETS)])
    factor_vols = np.array([0.010, 0.006, 0.005])
    idio = r.uniform(0.008, 0.025, N_ASSETS)
    stale = sorted(int(i) for i in r.choice(N_ASSETS, 2, replace=False))
    loadings[stale, 0] = r.uniform(1.2, 1.5, 2)
    idio[stale] = r.uniform(0.012, 0.016, 2)
    covariance = loadings @ np.diag(factor_vols**2) @ loadings.T + np.diag(idio**2)
    return {"loadings": loadings, "factor_vols": factor_vols, "idio": idio, "stale": stale, "covariance": covariance}


def simulate(world, rng, n_days):
    """True daily returns and the recorded ones (stale assets: returns accrue until a trade prints)."""
    factors = rng.standard_normal((n_days, 3)) * world["factor_vols"]
    true_returns = factors @ world["loadings"].T + rng.standard_normal((n_days, N_ASSETS)) * world["idio"]
    recorded = true_returns.copy()
    for i in world["stale"]:
        trades = rng.random(n_days) < 0.3
        accrued = 0.0
        for t in range(n_days):
            accrued += true_returns[t, i]
            if trades[t]:
                recorded[t, i], accrued = accrued, 0.0
            else:
                recorded[t, i] = 0.0
    return true_returns, recorded


def min_variance(covariance):
    n = covariance.shape[0]
    result = minimize(
        lambda w: w @ covariance @ w, np.full(n, 1.0 / n), jac=lambda w: 2 * covariance @ w, method="SLSQP",
        bounds=[(LOWER, UPPER)] * n, constraints=[{"type": "eq", "fun": lambda w: w.sum() - 1, "jac": lambda w: np.ones(n)}],
        options={"maxiter": 500, "ftol": 1e-14},
    )
    return result.x
