# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""The planted truth of demo-potency: one compound's EC50 and Hill slope, and the noisy plate reads."""

from demolib import stream

CONCENTRATIONS_UM = [0.01, 0.05, 0.2, 1.0, 5.0, 20.0, 100.0, 500.0]
REPLICATES = 3
NOISE_PERCENT = 3.0


def truth(seed):
    rng = stream(seed, "truth")
    return {"log10_ec50_uM": float(rng.uniform(-0.5, 1.5)), "hill": float(rng.uniform(0.8, 2.0))}


def wells(seed):
    """(dose in µM, % inhibition) per well, rounded as written."""
    planted = truth(seed)
    ec50 = 10 ** planted["log10_ec50_uM"]
    rng = stream(seed, "wells")
    rows = []
    for dose in CONCENTRATIONS_UM:
        mean = 100.0 / (1.0 + (ec50 / dose) ** planted["hill"])
        for _ in range(REPLICATES):
            rows.append((dose, round(float(mean + rng.normal(0.0, NOISE_PERCENT)), 2)))
    return rows
