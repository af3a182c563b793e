"""Reference solution for pharmacy-dose-response. `python3 run.py` (careful) or `python3 run.py --careless`."""

import sys

import numpy as np
import pandas as pd
from scipy.optimize import curve_fit

import refkit

CARELESS = "--careless" in sys.argv


def hill(log_c, log_ec50, h, emax):
    return emax / (1.0 + 10 ** (h * (log_ec50 - log_c)))


def hill4(log_c, log_ec50, h, emax, bottom):
    return bottom + (emax - bottom) / (1.0 + 10 ** (h * (log_ec50 - log_c)))


def main():
    refkit.prepare()
    assay = pd.read_csv("data/assay.csv")
    compounds = pd.read_csv("data/compounds.csv")
    if CARELESS:
        vehicle = assay.loc[assay["sample"] == "VEHICLE", "rlu"].mean()
        full = assay.loc[assay["sample"] == "FULL_INHIBITION", "rlu"].mean()
        assay["inhibition"] = 100 * (vehicle - assay["rlu"]) / (vehicle - full)
    else:
        controls = assay.groupby(["plate", "sample"])["rlu"].mean().unstack()
        vehicle = assay["plate"].map(controls["VEHICLE"])
        full = assay["plate"].map(controls["FULL_INHIBITION"])
        assay["inhibition"] = 100 * (vehicle - assay["rlu"]) / (vehicle - full)
    data = assay[assay["concentration_M"].notna()].copy()
    data["log_c"] = np.log10(data["concentration_M"])
    solubility = dict(zip(compounds["compound"], np.log10(compounds["solubility_uM"] * 1e-6)))

    rows, limited, fits, dropped = [], [], {}, []
    for name, group in data.groupby("sample"):
        keep = group if CARELESS else group[group["log_c"] <= solubility[name] + 1e-9]
        if len(keep) < len(group):
            limited.append(name)
        x, y = keep["log_c"].to_numpy(), keep["inhibition"].to_numpy()
        if CARELESS:
            p, cov = curve_fit(hill4, x, y, p0=[-6.5, 1.0, 90, 0], bounds=([-11, 0.2, 0, -100], [-3, 5, 200, 100]), maxfev=20000)
        else:
            p, _ = curve_fit(hill, x, y, p0=[-6.5, 1.0, 90], bounds=([-11, 0.2, 0], [-3, 5, 150]), loss="soft_l1", f_scale=5.0)
            resid = y - hill(x, *p)
            inlier = np.abs(resid) < 5 * 1.4826 * np.median(np.abs(resid))
            dropped.extend(f"{name}@{c:.1f}" for c in x[~inlier])
            x, y = x[inlier], y[inlier]
            p, cov = curve_fit(hill, x, y, p0=p, bounds=([-11, 0.2, 0], [-3, 5, 150]), maxfev=20000)
        se = float(np.sqrt(cov[0, 0]))
        fits[name] = (p, keep, group)
        rows.append([name, p[0], p[0] - 1.96 * se, p[0] + 1.96 * se, p[1], p[2]])

    table = pd.DataFrame(rows, columns=["compound", "log10_ec50", "log10_ec50_ci_low", "log10_ec50_ci_high", "hill", "emax"])
    table.to_csv("results/potency.csv", index=False, float_format="%.4f")
    ranking = table.sort_values("log10_ec50")["compound"].tolist()
    refkit.save_json("metrics.json", {
        "most_potent": ranking[0], "potency_order": ranking,
        "solubility_limited_compounds": limited,
        "outlier_wells_dropped": dropped,
        "median_ci_width_log10": float((table["log10_ec50_ci_high"] - table["log10_ec50_ci_low"]).median()),
    })
    pooled = {}
    for name, (p, keep, group) in fits.items():
        alt, _ = curve_fit(hill4, group["log_c"], group["inhibition"], p0=[-6.5, 1.0, 90, 0],
                           bounds=([-11, 0.2, 0, -100], [-3, 5, 200, 100]), maxfev=20000)
        pooled[name] = float(alt[0])
    refkit.save_json("ablation.json", {
        "chosen": {"log10_ec50": {r[0]: float(r[1]) for r in rows}},
        "all_points_four_parameter": {"log10_ec50": pooled},
    })
    fig, ax = refkit.figure("Dose-response curves (plate-normalised)", "log10 concentration (M)", "% inhibition")
    grid = np.linspace(-9, -4.5, 100)
    for name, (p, keep, group) in fits.items():
        line, = ax.plot(grid, hill(grid, *p[:3]) if not CARELESS else hill4(grid, *p), lw=1)
        ax.plot(group["log_c"], group["inhibition"], ".", color=line.get_color(), ms=3)
    refkit.save_plot(fig, "dose_response_curves.png")
    fig, ax = refkit.figure("EC50 with 95 % intervals", "compound", "log10 EC50")
    ax.errorbar(range(len(rows)), table["log10_ec50"], yerr=[table["log10_ec50"] - table["log10_ec50_ci_low"], table["log10_ec50_ci_high"] - table["log10_ec50"]], fmt="o")
    ax.set_xticks(range(len(rows)), table["compound"], rotation=45)
    refkit.save_plot(fig, "ec50_intervals.png")
    refkit.write_report("Potency of eight compounds", [
        ("Summary", f"EC50, Hill slope and maximal inhibition for eight compounds from a luminescence assay. Most potent: {ranking[0]}. Potency order: {', '.join(ranking)}. Solubility-limited compounds: {', '.join(limited) or 'none'}."),
        ("Data", "Raw luminescence differs several-fold between plates, so every well is normalised to the VEHICLE (0 %) and FULL_INHIBITION (100 %) controls of its own plate. Concentrations above a compound's kinetic solubility are excluded: there the compound precipitates, the real concentration stops rising and light scattering inflates the signal, which would bend the curve down at the top. A robust first fit identifies outlier wells (residual above five robust standard deviations, typically wells that read like vehicle: failed dispensing); they are dropped before the final fit: " + (", ".join(dropped) or "none") + "."),
        ("Method", "A three-parameter Hill model (bottom fixed at 0 after normalisation) fitted by least squares to all replicate wells of a compound in log concentration; 95 % intervals for log10 EC50 from the asymptotic covariance."),
        ("Results", refkit.table([[r[0], f"{r[1]:.2f}", f"[{r[2]:.2f}, {r[3]:.2f}]", f"{r[4]:.2f}", f"{r[5]:.1f}"] for r in rows], ["compound", "log10 EC50", "95 % CI", "Hill", "Emax"]) + "\n\nPlots: deliverables/plots/dose_response_curves.png and deliverables/plots/ec50_intervals.png."),
        ("Limitations", "Asymptotic intervals assume independent wells; plate-level variation beyond the controls is not modelled. Solubility-limited compounds have fewer usable points and wider intervals. Reproduce with python3 run.py."),
    ])


if __name__ == "__main__":
    main()
