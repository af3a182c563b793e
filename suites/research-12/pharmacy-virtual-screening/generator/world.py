# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""pharmacy-virtual-screening: the planted world (withheld).

Compounds come in scaffold families: each scaffold fixes a region of descriptor space, a fingerprint pattern and an
activity offset. Activity (pIC50) is a planted non-linear function of descriptors and fingerprint bits plus the
scaffold offset and assay noise. The screening library holds only new scaffolds, so random cross-validation
(which mixes scaffolds between folds) overstates accuracy. `confirmatory_retest` marks compounds re-tested because
their primary result was promising: it is selected on the outcome and is 0 for every library compound.
"""

import numpy as np

from genlib import stream

PHYSCHEM = ["mw", "logp", "tpsa", "hbd", "hba", "rotb", "arom_rings", "fsp3"]
N_BITS = 24
BITS = [f"fp{i:02d}" for i in range(N_BITS)]
LEAK = "confirmatory_retest"
TRAIN_SCAFFOLDS, LIBRARY_SCAFFOLDS = 50, 14
PER_TRAIN, PER_LIBRARY = 18, 25
NOISE = 0.35


def activity_core(x):
    """The planted structure-activity relationship, without scaffold offset or noise."""
    return (
        5.5
        + 1.0 * np.tanh(x["logp"] - 2.5)
        - 1.8 * np.tanh(((x["tpsa"] - 75.0) / 35.0) ** 2 / 2.0)
        + 0.8 * x["fp03"] * x["fp11"]
        + 0.6 * x["fp07"]
        - 0.5 * x["fp19"]
        + 0.3 * x["arom_rings"]
        - 0.002 * (x["mw"] - 400.0)
    )


def _scaffold_compounds(rng, scaffold, count):
    center = {
        "mw": rng.uniform(280, 520), "logp": rng.uniform(-0.5, 5.5), "tpsa": rng.uniform(25, 135),
        "hbd": rng.integers(0, 4), "hba": rng.integers(2, 9), "rotb": rng.integers(1, 9),
        "arom_rings": rng.integers(0, 4), "fsp3": rng.uniform(0.05, 0.7),
    }
    bit_probability = np.where(rng.random(N_BITS) < 0.35, 0.85, 0.08)
    x = {
        "mw": center["mw"] + rng.normal(0, 25, count),
        "logp": center["logp"] + rng.normal(0, 0.5, count),
        "tpsa": np.clip(center["tpsa"] + rng.normal(0, 10, count), 5, 180),
        "hbd": np.clip(center["hbd"] + rng.integers(-1, 2, count), 0, 6),
        "hba": np.clip(center["hba"] + rng.integers(-1, 2, count), 0, 12),
        "rotb": np.clip(center["rotb"] + rng.integers(-2, 3, count), 0, 14),
        "arom_rings": np.clip(center["arom_rings"] + rng.integers(-1, 2, count), 0, 5),
        "fsp3": np.clip(center["fsp3"] + rng.normal(0, 0.08, count), 0, 1),
    }
    bits = rng.random((count, N_BITS)) < bit_probability
    for i, name in enumerate(BITS):
        x[name] = bits[:, i].astype(int)
    x["scaffold"] = np.array([scaffold] * count)
    return x


def library(world_seed, kind):
    """Compounds of the training set or the screening library, with true activities."""
    rng = stream(world_seed, f"compounds-{kind}")
    n_scaffolds, per = (TRAIN_SCAFFOLDS, PER_TRAIN) if kind == "train" else (LIBRARY_SCAFFOLDS, PER_LIBRARY)
    offset = 0 if kind == "train" else TRAIN_SCAFFOLDS
    parts = [_scaffold_compounds(rng, f"SCF-{offset + s + 1:03d}", per) for s in range(n_scaffolds)]
    x = {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}
    scaffold_effect = {s: rng.normal(0, 0.6) for s in np.unique(x["scaffold"])}
    core = activity_core(x)
    x["pic50"] = core + np.array([scaffold_effect[s] for s in x["scaffold"]]) + rng.normal(0, NOISE, len(core))
    x["core"] = core
    if kind == "train":
        x[LEAK] = (x["pic50"] > 6.3).astype(int) * (rng.random(len(core)) < 0.9)
    else:
        x[LEAK] = np.zeros(len(core), int)
    prefix = "TR" if kind == "train" else "LIB"
    x["compound_id"] = np.array([f"{prefix}-{i + 1:04d}" for i in range(len(core))])
    order = rng.permutation(len(core))
    return {key: value[order] for key, value in x.items()}
