# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""pharmacy-population-pk: the planted world (withheld).

One-compartment oral pharmacokinetics in 60 subjects. Clearance scales with body weight by a planted allometric
exponent, volume proportionally; all three parameters vary between subjects (log-normal). Concentrations below the
lower limit of quantification are reported as 0 with a flag: treating them as measured zeros biases elimination.
The dosing question is graded on a fresh virtual population drawn from the true model.
"""

import numpy as np

from genlib import stream

N_SUBJECTS = 60
LLOQ = 0.25  # mg/L
TIMES = np.array([0.5, 1, 2, 4, 8, 12, 24, 36])
TAU = 12.0
WINDOW = (2.0, 10.0)  # steady-state trough >= 2, peak <= 10 mg/L
WEIGHTS = (50, 75, 110)
DOSES = np.arange(50, 2001, 50)


def truth(seed):
    r = stream(seed, "truth")
    cl, half_life = float(r.uniform(4.0, 9.0)), float(r.uniform(4.0, 7.0))
    return {
        "cl": cl, "v": cl * half_life / np.log(2), "ka": float(r.uniform(0.7, 2.0)),
        "theta": float(r.uniform(0.6, 1.0)), "omega_cl": 0.2, "omega_v": 0.15, "omega_ka": 0.2,
    }


def individual(world, rng, weights):
    n = len(weights)
    cl = world["cl"] * (weights / 70.0) ** world["theta"] * np.exp(world["omega_cl"] * rng.standard_normal(n))
    v = world["v"] * (weights / 70.0) * np.exp(world["omega_v"] * rng.standard_normal(n))
    ka = world["ka"] * np.exp(world["omega_ka"] * rng.standard_normal(n))
    return cl, v, ka


def single_dose(dose, cl, v, ka, t):
    ke = cl / v
    return dose * ka / (v * (ka - ke)) * (np.exp(-ke * t) - np.exp(-ka * t))


def steady_state(dose, cl, v, ka, tau=TAU, points=97):
    """Trough and peak at steady state for every patient (arrays)."""
    t = np.linspace(0.0, tau, points)[:, None]
    ke = cl / v
    c = dose * ka / (v * (ka - ke)) * (np.exp(-ke * t) / (1 - np.exp(-ke * tau)) - np.exp(-ka * t) / (1 - np.exp(-ka * tau)))
    return c[-1], c.max(axis=0)


def study(world, rng):
    weights = np.clip(rng.normal(75, 16, N_SUBJECTS), 45, 125).round(1)
    doses = rng.choice([100, 200, 400], N_SUBJECTS)
    cl, v, ka = individual(world, rng, weights)
    rows = []
    for i in range(N_SUBJECTS):
        times = np.sort(rng.choice(TIMES, 6, replace=False)) * rng.uniform(0.92, 1.08, 6)
        true = single_dose(doses[i], cl[i], v[i], ka[i], times)
        observed = true * (1 + 0.12 * rng.standard_normal(6)) + 0.02 * rng.standard_normal(6)
        for t, c in zip(times, observed):
            blq = c < LLOQ
            rows.append((f"ID{i + 1:03d}", weights[i], doses[i], t, 0.0 if blq else c, int(blq)))
    return rows


def in_window(world, dose, weight, n=4000, label=0):
    rng = np.random.default_rng([7919, label, int(weight)])
    cl, v, ka = individual(world, rng, np.full(n, float(weight)))
    trough, peak = steady_state(dose, cl, v, ka)
    return float(np.mean((trough >= WINDOW[0]) & (peak <= WINDOW[1])))
