"""Reference solution for pharmacy-dose-response: `python3 run.py` (careful), `--careless` (every trap) or
`--trap <name>`: pooled-controls (every plate normalised with the controls of all plates), above-solubility-kept
(wells above a compound's solubility are fitted), failed-dispenses-kept (wells that read like vehicle are fitted),
emax-fixed-100 (every compound fitted as a full inhibitor)."""

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit

import refkit

TRAPS = refkit.fallen_traps({"pooled-controls", "above-solubility-kept", "failed-dispenses-kept", "emax-fixed-100"})
BOUNDS = ([-11, 0.2, 0], [-3, 5, 150])


def hill(log_c, log_ec50, h, emax):
    return emax / (1.0 + 10 ** (h * (log_ec50 - log_c)))


def hill_full(log_c, log_ec50, h):
    return hill(log_c, log_ec50, h, 100.0)


def fit(x, y, robust=False):
    """(log_ec50, hill, emax, variance of log_ec50): a three-parameter Hill fit, or Emax fixed at 100 under the trap."""
    if "emax-fixed-100" in TRAPS:
        p, cov = curve_fit(hill_full, x, y, p0=[-6.5, 1.0], bounds=([-11, 0.2], [-3, 5]), maxfev=20000)
        return p[0], p[1], 100.0, cov[0, 0]
    extra = {"loss": "soft_l1", "f_scale": 5.0} if robust else {"maxfev": 20000}
    p, cov = curve_fit(hill, x, y, p0=[-6.5, 1.0, 90], bounds=BOUNDS, **extra)
    return p[0], p[1], p[2], cov[0, 0]


def normalise(assay):
    if "pooled-controls" in TRAPS:
        vehicle = assay.loc[assay["sample"] == "VEHICLE", "rlu"].mean()
        full = assay.loc[assay["sample"] == "FULL_INHIBITION", "rlu"].mean()
    else:
        controls = assay.groupby(["plate", "sample"])["rlu"].mean().unstack()
        vehicle = assay["plate"].map(controls["VEHICLE"])
        full = assay["plate"].map(controls["FULL_INHIBITION"])
    assay["inhibition"] = 100 * (vehicle - assay["rlu"]) / (vehicle - full)


def main():
    refkit.prepare()
    assay = pd.read_csv("data/assay.csv")
    compounds = pd.read_csv("data/compounds.csv")
    normalise(assay)
    data = assay[assay["concentration_M"].notna()].copy()
    data[["plate", "well", "inhibition"]].to_csv("results/normalised.csv", index=False, float_format="%.3f")
    data["log_c"] = np.log10(data["concentration_M"])
    solubility = dict(zip(compounds["compound"], np.log10(compounds["solubility_uM"] * 1e-6)))

    rows, limited, fits, excluded = [], [], {}, []
    for name, group in data.groupby("sample"):
        above = group["log_c"] > solubility[name] + 1e-9
        keep = group if "above-solubility-kept" in TRAPS else group[~above]
        if "above-solubility-kept" not in TRAPS and above.any():
            limited.append(name)
            excluded += [(r.plate, r.well, "above solubility") for r in group[above].itertuples()]
        if "failed-dispenses-kept" not in TRAPS:
            # A robust first fit; wells far below it read like vehicle (failed dispensing) and are dropped.
            p = fit(keep["log_c"].to_numpy(), keep["inhibition"].to_numpy(), robust=True)
            resid = keep["inhibition"].to_numpy() - hill(keep["log_c"].to_numpy(), *p[:3])
            outlier = np.abs(resid) >= 5 * 1.4826 * np.median(np.abs(resid))
            reasons = np.where(resid < 0, "failed dispense (reads like vehicle)", "outlier")
            excluded += [(r.plate, r.well, why) for r, why in zip(keep[outlier].itertuples(), reasons[outlier])]
            keep = keep[~outlier]
        log_ec50, h, emax, variance = fit(keep["log_c"].to_numpy(), keep["inhibition"].to_numpy())
        se = float(np.sqrt(variance))
        fits[name] = ((log_ec50, h, emax), group)
        rows.append([name, log_ec50, log_ec50 - 1.96 * se, log_ec50 + 1.96 * se, h, emax])

    table = pd.DataFrame(rows, columns=["compound", "log10_ec50", "log10_ec50_ci_low", "log10_ec50_ci_high", "hill", "emax"])
    table.to_csv("results/potency.csv", index=False, float_format="%.4f")
    table = pd.read_csv("results/potency.csv")  # the rounded values, as every other file states them
    pd.DataFrame(excluded, columns=["plate", "well", "reason"]).to_csv("results/excluded_wells.csv", index=False)
    ranking = table.sort_values("log10_ec50")["compound"].tolist()
    median_width = round(float((table["log10_ec50_ci_high"] - table["log10_ec50_ci_low"]).median()), 4)
    refkit.save_json("metrics.json", {
        "most_potent": ranking[0], "potency_order": ranking,
        "solubility_limited_compounds": limited,
        "median_ci_width_log10": median_width,
    })
    alternative = {}
    for name, (_, group) in fits.items():
        p, _ = curve_fit(hill, group["log_c"], group["inhibition"], p0=[-6.5, 1.0, 90], bounds=BOUNDS, maxfev=20000)
        alternative[name] = round(float(p[0]), 4)
    refkit.save_json("ablation.json", {"variants": [
        {"name": "chosen", "description": "the analysis reported in results/potency.csv",
         "log10_ec50": dict(zip(table["compound"], table["log10_ec50"].astype(float)))},
        {"name": "all_wells", "description": "every well fitted: none excluded",
         "log10_ec50": alternative},
    ]})
    fig, ax = refkit.figure("Dose-response curves (plate-normalised)", "log10 concentration (M)", "% inhibition")
    grid = np.linspace(-9, -4.5, 100)
    for name, (p, group) in fits.items():
        line, = ax.plot(grid, hill(grid, *p), lw=1)
        ax.plot(group["log_c"], group["inhibition"], ".", color=line.get_color(), ms=3)
    refkit.save_plot(fig, "dose_response_curves.png")
    fig, ax = refkit.figure("EC50 with 95 % intervals", "compound", "log10 EC50")
    ax.errorbar(range(len(rows)), table["log10_ec50"], yerr=[table["log10_ec50"] - table["log10_ec50_ci_low"], table["log10_ec50_ci_high"] - table["log10_ec50"]], fmt="o")
    ax.set_xticks(range(len(rows)), table["compound"], rotation=45)
    refkit.save_plot(fig, "ec50_intervals.png")
    dropped = ", ".join(f"{plate} well {well} ({why})" for plate, well, why in excluded) or "none"
    refkit.write_report("Potency of eight compounds", [
        ("Summary", f"EC50 (relative), Hill slope and maximal inhibition for eight compounds from a luminescence assay. Most potent: {ranking[0]}. Potency order: {', '.join(ranking)}. Solubility-limited compounds: {', '.join(limited) or 'none'}. Median width of the 95 % intervals: {median_width:.4f} log10 units."),
        ("Data", "Raw luminescence differs several-fold between plates, so every well is normalised to the VEHICLE (0 %) and FULL_INHIBITION (100 %) controls of its own plate. Concentrations above a compound's kinetic solubility are excluded: there the compound precipitates, the real concentration stops rising and light scattering inflates the signal, which would bend the curve down at the top. A robust first fit identifies outlier wells (residual above five robust standard deviations); wells far below the curve read like vehicle (failed dispensing). Excluded wells (also in results/excluded_wells.csv): " + dropped + "."),
        ("Method", "A three-parameter Hill model (bottom fixed at 0 after normalisation, Emax free so that partial inhibitors keep their plateau; EC50 is the curve's midpoint) fitted by least squares to all replicate wells of a compound in log concentration; 95 % intervals for log10 EC50 from the asymptotic covariance. Ablation (results/ablation.json): the same model fitted to every well."),
        ("Results", refkit.table([[r.compound, f"{r.log10_ec50:.2f}", f"[{r.log10_ec50_ci_low:.2f}, {r.log10_ec50_ci_high:.2f}]", f"{r.hill:.2f}", f"{r.emax:.1f}"] for r in table.itertuples()], ["compound", "log10 EC50", "95 % CI", "Hill", "Emax"]) + "\n\nPlots: deliverables/plots/dose_response_curves.png and deliverables/plots/ec50_intervals.png."),
        ("Limitations", "Asymptotic intervals assume independent wells; plate-level variation beyond the controls is not modelled. Solubility-limited compounds have fewer usable points and wider intervals. Reproduce with python3 run.py."),
    ])


if __name__ == "__main__":
    main()
