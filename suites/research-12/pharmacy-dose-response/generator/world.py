# mass:withheld (oracle side: never copied into a workspace, never shown to any role)
"""pharmacy-dose-response: the planted world (withheld).

Eight compounds in a luminescence inhibition assay. Each compound's true curve is a Hill curve with planted EC50,
Hill slope and maximal inhibition. Plates differ strongly in raw signal (baseline and background), so raw counts are
only comparable after normalising each plate to its own controls. Two compounds precipitate above their solubility
limit (given in compounds.csv): above it the effective concentration stops rising and light scattering raises the
signal, so the apparent inhibition falls at the top of the range.
A few dispenses failed: from FAILED_DISPENSE_FROM up such a well received no compound and reads like VEHICLE.
"""

import numpy as np

from genlib import stream

COMPOUNDS = [f"CPD-{i + 1:02d}" for i in range(8)]
LOG_CONCENTRATIONS = np.round(np.arange(-9.0, -4.49, 0.5), 2)  # molar, half-log steps
N_PLATES = 4
CONTROL_WELLS = 8
FAILED_DISPENSE_FROM = -6.5  # failed dispenses show from this log10 concentration up


def truth(seed):
    r = stream(seed, "truth")
    log_ec50 = r.uniform(-8.0, -5.8, len(COMPOUNDS))
    insoluble = sorted(int(i) for i in r.choice(len(COMPOUNDS), 2, replace=False))
    solubility_log = r.uniform(-4.0, -3.3, len(COMPOUNDS))  # soluble over the whole range
    for i in insoluble:
        log_ec50[i] = r.uniform(-7.5, -6.6)
        solubility_log[i] = log_ec50[i] + r.uniform(0.9, 1.3)
    return {
        "log_ec50": log_ec50.tolist(),
        "hill": r.uniform(0.8, 2.2, len(COMPOUNDS)).tolist(),
        "emax": r.uniform(55.0, 100.0, len(COMPOUNDS)).tolist(),
        "insoluble": insoluble,
        "solubility_log": solubility_log.tolist(),
        "baseline": r.uniform(25000, 65000, N_PLATES).tolist(),
        "background": r.uniform(1500, 4000, N_PLATES).tolist(),
        "dispense_failures": sorted(int(i) for i in r.choice(N_PLATES * 60, 5, replace=False)),
    }


def inhibition(world, index, log_concentration):
    """True % inhibition of compound `index` at (nominal) log10 molar concentration."""
    effective = np.minimum(log_concentration, world["solubility_log"][index])
    h, ec = world["hill"][index], world["log_ec50"][index]
    return world["emax"][index] / (1.0 + 10 ** (h * (ec - effective)))


def plate_layout(plate):
    """[(compound index or control name, log concentration or None)] of the wells of plate `plate` (0-based), in
    well order (well number = position + 1)."""
    layout = [
        (index, c)
        for index in range(len(COMPOUNDS))
        for replicate in range(3)
        if (index + replicate) % N_PLATES == plate
        for c in LOG_CONCENTRATIONS
    ]
    return layout + [("VEHICLE", None)] * CONTROL_WELLS + [("FULL_INHIBITION", None)] * CONTROL_WELLS


def reads_as_vehicle(world, plate, well, what, log_c):
    """Whether a failed dispense left the well (0-based position) without compound: it then reads like VEHICLE."""
    failed = plate * 60 + well in world["dispense_failures"] and not isinstance(what, str)
    return failed and log_c >= FAILED_DISPENSE_FROM


def failed_dispenses(world, min_inhibition=25.0):
    """The failed dispenses careful work can find: [(plate name, well number, compound index)] of wells that read
    like VEHICLE where the compound should inhibit by at least `min_inhibition` %, below its solubility limit."""
    found = []
    for plate in range(N_PLATES):
        for well, (what, log_c) in enumerate(plate_layout(plate)):
            if not reads_as_vehicle(world, plate, well, what, log_c) or log_c > world["solubility_log"][what]:
                continue
            if inhibition(world, what, log_c) >= min_inhibition:
                found.append((f"P{plate + 1}", well + 1, what))
    return found


def wells(world, rng):
    """Rows of (plate, well, compound, log concentration or None, rlu)."""
    rows = []
    for plate in range(N_PLATES):
        base, background = world["baseline"][plate], world["background"][plate]
        for well, (what, log_c) in enumerate(plate_layout(plate)):
            if what == "VEHICLE" or reads_as_vehicle(world, plate, well, what, log_c):
                signal = base + background
            elif what == "FULL_INHIBITION":
                signal = background
            else:
                signal = base * (1 - inhibition(world, what, log_c) / 100.0) + background
                if log_c > world["solubility_log"][what]:
                    signal += base * 0.6 * (log_c - world["solubility_log"][what])  # light scattering
            signal += 0.04 * base * rng.standard_normal()
            name = what if isinstance(what, str) else COMPOUNDS[what]
            rows.append((f"P{plate + 1}", well + 1, name, None if log_c is None else 10.0**log_c, signal))
    return rows
