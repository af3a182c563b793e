# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""finance-pairs-trading: the planted world (withheld).

Sixteen stocks. Three pairs are cointegrated (log p_y = a + gamma * log p_x + s, s an OU process with a planted
half-life). One further pair shares a strong common stochastic trend with tiny idiosyncratic noise: its returns are the
most correlated of all, yet its spread is a random walk (the trap for correlation-based pair picking).
"""

import numpy as np

from genlib import stream

N_STOCKS = 16
N_DAYS = 1000
COST = 0.001  # per unit of position change, per leg
TICKERS = [f"S{i + 1:02d}" for i in range(N_STOCKS)]


def truth(seed):
    r = stream(seed, "truth")
    order = [int(i) for i in r.permutation(N_STOCKS)]
    pairs = []
    for k in range(3):
        x, y = order[2 * k], order[2 * k + 1]
        pairs.append({
            "x": TICKERS[x], "y": TICKERS[y],
            "gamma": float(r.uniform(0.6, 1.5)), "intercept": float(r.uniform(-0.3, 0.3)),
            "half_life": float(r.uniform(3.0, 10.0)), "spread_sd": float(r.uniform(0.02, 0.04)),
        })
    spurious = (TICKERS[order[6]], TICKERS[order[7]])
    return {
        "pairs": pairs, "spurious": spurious, "order": order,
        "betas": r.uniform(0.5, 1.5, N_STOCKS).tolist(), "idio": r.uniform(0.010, 0.020, N_STOCKS).tolist(),
        "start": r.uniform(2.5, 4.5, N_STOCKS).tolist(),
    }


def simulate(world, rng, n_days, state=None):
    """Log prices (n_days x stocks) and the final state, continuing from `state` when given."""
    index = {ticker: i for i, ticker in enumerate(TICKERS)}
    market = rng.normal(0.0, 0.008, n_days)
    common = rng.normal(0.0002, 0.012, n_days)
    steps = np.outer(market, world["betas"]) + rng.standard_normal((n_days, N_STOCKS)) * world["idio"]
    for ticker in world["spurious"]:
        steps[:, index[ticker]] = common + rng.normal(0.0, 0.003, n_days)
    start = np.array(world["start"]) if state is None else state["log_prices"]
    log_prices = start + np.cumsum(steps, axis=0)
    spreads = {}
    for pair in world["pairs"]:
        phi = 0.5 ** (1.0 / pair["half_life"])
        shocks = rng.normal(0.0, pair["spread_sd"] * np.sqrt(1 - phi**2), n_days)
        s = np.empty(n_days)
        previous = 0.0 if state is None else state["spreads"][pair["y"]]
        for t in range(n_days):
            previous = phi * previous + shocks[t]
            s[t] = previous
        spreads[pair["y"]] = float(s[-1])
        log_prices[:, index[pair["y"]]] = pair["intercept"] + pair["gamma"] * log_prices[:, index[pair["x"]]] + s
    return log_prices, {"log_prices": log_prices[-1], "spreads": spreads}


def pair_pnl(log_prices, rule):
    """Daily P&L of one pair rule (see the task text) in log-spread units, after costs."""
    index = {ticker: i for i, ticker in enumerate(TICKERS)}
    spread = log_prices[:, index[rule["y"]]] - rule["hedge_ratio"] * log_prices[:, index[rule["x"]]]
    z = (spread - rule["spread_mean"]) / rule["spread_std"]
    position = np.zeros(len(z))
    held = 0.0
    for t in range(len(z)):
        if held == 0.0:
            held = -1.0 if z[t] > rule["entry_z"] else 1.0 if z[t] < -rule["entry_z"] else 0.0
        elif (held > 0 and z[t] > -rule["exit_z"]) or (held < 0 and z[t] < rule["exit_z"]):
            held = 0.0
        position[t] = held
    pnl = np.concatenate([[0.0], position[:-1] * np.diff(spread)])
    trades = np.abs(np.diff(np.concatenate([[0.0], position])))
    return pnl - COST * trades * (1 + abs(rule["hedge_ratio"]))
