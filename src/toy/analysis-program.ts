/** The result line the script prints; the worker's report is built from it. */
export const RESULT_PREFIX = 'TOY_RESULT ';

/**
 * The body of every toy analysis script, after the constants `analysisScript` writes at its top: read the data, run
 * the recipe, write the worker's files, run the chosen checks and print the `TOY_RESULT` line.
 */
export const ANALYSIS_PROGRAM = String.raw`
METRIC_KINDS = ("metrics-json", "json")
os.chdir(os.path.dirname(os.path.abspath(__file__)))


def read_table(path):
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    columns = {}
    for name in rows[0].keys() if rows else []:
        try:
            columns[name] = np.array([float(row[name]) for row in rows])
        except (TypeError, ValueError):
            pass
    return columns


def data_file():
    for name in DATA_FILES:
        if name.endswith(".csv") and os.path.isfile(name):
            return name
    for folder, _, names in sorted(os.walk("data")):
        for name in sorted(names):
            if name.endswith(".csv"):
                return os.path.join(folder, name)
    raise ValueError("no CSV file under data/")


def pick(columns, words, exclude=()):
    candidates = [name for name in columns if name not in exclude]
    for name in candidates:
        if any(word in name.lower() for word in words):
            return name
    if not candidates:
        raise ValueError("no numeric column")
    return candidates[-1]


def dose_response(columns):
    dose = pick(columns, ("dose", "conc"))
    response = pick(columns, ("inhib", "resp", "effect", "signal"), exclude=(dose,))
    positive = columns[dose] > 0
    log_dose, y = np.log10(columns[dose][positive]), columns[response][positive]
    middle = (y > 2) & (y < 98)
    logit = np.log(y[middle] / (100 - y[middle]))
    slope, intercept = np.polyfit(log_dose[middle], logit, 1, w=y[middle] * (100 - y[middle]) / 2500)
    log10_ec50, hill = -intercept / slope, slope / math.log(10)
    # Gauss-Newton on the raw responses, started from the logit fit.
    for _ in range(50):
        power = np.clip(hill * (log10_ec50 - log_dose), -30, 30)
        u = 10.0**power
        fitted = 100 / (1 + u)
        scale = -100 * u * math.log(10) / (1 + u) ** 2
        jacobian = np.column_stack([scale * hill, scale * (log10_ec50 - log_dose)])
        step = np.linalg.lstsq(jacobian, y - fitted, rcond=None)[0]
        log10_ec50, hill = log10_ec50 + 0.8 * step[0], hill + 0.8 * step[1]
        if np.max(np.abs(step)) < 1e-9:
            break
    fitted = 100 / (1 + 10.0 ** np.clip(hill * (log10_ec50 - log_dose), -30, 30))
    return {
        "ec50_uM": float(10**log10_ec50),
        "log10_ec50": float(log10_ec50),
        "hill_slope": float(hill),
        "n_points": int(len(y)),
        "rmse_percent": float(np.sqrt(np.mean((fitted - y) ** 2))),
    }


def returns(columns):
    close = columns[pick(columns, ("close", "price", "adj"))]
    daily = np.diff(np.log(close))
    volatility = float(daily.std(ddof=1))
    return {
        "mean_daily_return": float(daily.mean()),
        "daily_volatility": volatility,
        "annualised_volatility": volatility * math.sqrt(252),
        "n_days": int(len(close)),
        "max_drawdown": float(np.max(1 - close / np.maximum.accumulate(close))),
    }


def summary(columns):
    values = {}
    for name, column in columns.items():
        values[name + "_mean"] = float(column.mean())
        values[name + "_std"] = float(column.std(ddof=1)) if len(column) > 1 else 0.0
    values["n_rows"] = int(len(next(iter(columns.values())))) if columns else 0
    return values


METHODS = {
    "dose-response": "A Hill curve from 0 % to 100 % was fitted to every well by least squares (Gauss-Newton, started "
    "from a weighted regression of the logit of the response on log10 of the dose); the EC50 is the dose at which "
    "the fitted curve crosses 50 %, and the Hill slope is the steepness of the curve.",
    "returns": "Daily log returns were computed from consecutive closing prices; their mean is the drift, their "
    "sample standard deviation is the daily volatility, and the annualised volatility scales it by the square root "
    "of 252 trading days.",
    "summary": "Every numeric column of the data file was summarised by its mean and its standard deviation.",
}
RECIPES = {"dose-response": dose_response, "returns": returns, "summary": summary}


def analyse():
    path = data_file()
    return path, RECIPES[RECIPE](read_table(path))


def finite(value):
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def existing_results():
    merged = {}
    for spec in DELIVERABLES:
        if spec["kind"] in METRIC_KINDS and os.path.isfile(spec["path"]):
            try:
                value = json.load(open(spec["path"]))
            except ValueError:
                continue
            if isinstance(value, dict):
                merged.update({key: item for key, item in value.items() if finite(item)})
    return merged


def write_json(path, value):
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        json.dump(value, handle, indent=2, allow_nan=False)
        handle.write("\n")


def write_metrics(spec, values):
    result = {key: value for key, value in values.items() if finite(value)}
    for key in spec["requiredKeys"]:
        result.setdefault(key, None)
    result.pop(SLIP_OMITTED_KEY, None)
    write_json(spec["path"], result)


def fmt(value):
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def section_text(name, values, source):
    numbers = ", ".join(f"{key} = {fmt(value)}" for key, value in values.items()) or "none"
    lowered = name.lower()
    if "summary" in lowered or "abstract" in lowered:
        return f"This report answers the task '{TITLE}'. The headline numbers are: {numbers}."
    if "method" in lowered or "approach" in lowered:
        return METHODS[RECIPE]
    if "result" in lowered or "finding" in lowered:
        lines = [f"- {key}: {fmt(value)}" for key, value in values.items()]
        return "\n".join(lines or ["- no number was computed"])
    if "data" in lowered:
        return f"The analysis read {source or 'the data folder'} as given, without changing it."
    if "limit" in lowered:
        return (
            "The toy model ran one fixed analysis without intervals or alternative models; a real study would "
            "quantify the uncertainty of every number and test how sensitive it is to the choices made."
        )
    return "The task asks for this section; the toy model has nothing to add beyond the numbers above."


def checks_text():
    lines = []
    for name in sorted(os.listdir("checks")) if os.path.isdir("checks") else []:
        try:
            record = json.load(open(os.path.join("checks", name)))
        except ValueError:
            continue
        for check, passed in sorted(record.get("checks", {}).items()):
            lines.append(f"- {record.get('agent', name)}: {check} {'passed' if passed else 'FAILED'}")
    return lines


def write_report(spec, values, source):
    sections = spec["sections"] or ["Summary", "Method", "Results"]
    parts = [f"# {TITLE}", "", "(toy output) Written by the mass toy model, a rule-based stand-in for a language model.", ""]
    if not REPORT_COMPLETE:
        first = section_text(sections[0], values, source).split(". ")[0]
        parts += [f"## {sections[0]}", "", first.rstrip(".") + ".", ""]
    else:
        for name in sections:
            parts += [f"## {name}", "", section_text(name, values, source), ""]
        validation = checks_text()
        parts += ["## Validation", ""] + (validation or ["- no check was run"]) + [""]
        words = len("\n".join(parts).split())
        notes = [f"The value of {key} is {fmt(value)}." for key, value in values.items()] or ["No number was computed."]
        extra = []
        while words < spec["minWords"] + 10:
            sentence = notes[len(extra) % len(notes)]
            extra.append(sentence)
            words += len(sentence.split())
        if extra:
            parts += ["## Notes", "", " ".join(extra), ""]
    if os.path.dirname(spec["path"]):
        os.makedirs(os.path.dirname(spec["path"]), exist_ok=True)
    with open(spec["path"], "w") as handle:
        handle.write("\n".join(parts))


def write_other(spec, values):
    if spec["kind"] == "entry-point":
        if os.path.abspath(spec["path"]) != os.path.abspath(__file__):
            with open(__file__) as source, open(spec["path"], "w") as target:
                target.write(source.read())
        return
    if os.path.dirname(spec["path"]):
        os.makedirs(os.path.dirname(spec["path"]), exist_ok=True)
    if spec["kind"] == "plot":
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        columns = read_table(data_file())
        names = list(columns)[:2]
        figure, axes = plt.subplots(figsize=(5, 4))
        if len(names) == 2:
            axes.plot(columns[names[0]], columns[names[1]], "o", markersize=3)
            axes.set_xlabel(names[0])
            axes.set_ylabel(names[1])
        axes.set_title("toy output")
        figure.savefig(spec["path"], dpi=80)
        plt.close(figure)
    elif spec["kind"] == "ablation-json":
        write_json(spec["path"], {"variants": {"toy_main": values, "toy_repeat": values}})
    elif spec["kind"] == "csv":
        header = spec["columns"] or list(values)
        with open(spec["path"], "w") as handle:
            handle.write(",".join(header) + "\n" + ",".join(fmt(values.get(column, "")) for column in header) + "\n")
    else:
        with open(spec["path"], "w") as handle:
            handle.write("Written by the mass toy model (toy output).\n")


def validate(own):
    problems = []
    for spec in DELIVERABLES:
        path = spec["path"]
        if not os.path.isfile(path):
            if path in own:
                problems.append(f"{path} was not written")
            continue
        if spec["kind"] in METRIC_KINDS:
            try:
                value = json.load(open(path))
            except ValueError:
                problems.append(f"{path} is not valid JSON")
                continue
            for key in spec["requiredKeys"]:
                if not isinstance(value, dict) or not finite(value.get(key)):
                    problems.append(f"{path}: {key} is missing or not a finite number")
        elif spec["kind"] == "report":
            text = open(path).read()
            headings = [line.lstrip("#").strip().lower() for line in text.splitlines() if line.startswith("#")]
            missing = [name for name in spec["sections"] if not any(name.lower() in h for h in headings)]
            if missing:
                problems.append(f"{path}: sections missing: {', '.join(missing)}")
            if len(text.split()) < spec["minWords"]:
                problems.append(f"{path}: fewer than {spec['minWords']} words")
    return problems


def run_check(name, values, own):
    problems = validate(own)
    lowered = name.lower()
    if any(word in lowered for word in ("rerun", "reproduc", "match", "consisten", "agree", "same")):
        _, again = analyse()
        for key, value in values.items():
            if key in again and not math.isclose(again[key], value, rel_tol=1e-6, abs_tol=1e-12):
                problems.append(f"re-running the analysis gives {key} = {fmt(again[key])}, not {fmt(value)}")
    if any(word in lowered for word in ("plausib", "range", "sanity", "positive", "bound")):
        for key, value in values.items():
            if ("volatility" in key or key.startswith(("ec50", "n_"))) and value <= 0:
                problems.append(f"{key} = {fmt(value)} is not positive")
    return problems


def main():
    problems, values, source = [], {}, None
    own = [spec["path"] for spec in OUTPUTS]
    if any(spec["kind"] in METRIC_KINDS for spec in OUTPUTS) or not existing_results():
        try:
            source, values = analyse()
        except Exception as error:
            problems.append(f"the analysis failed: {type(error).__name__}: {error}")
    else:
        values = existing_results()
    written = []
    for spec in sorted(OUTPUTS, key=lambda spec: spec["kind"] == "report"):
        if spec["kind"] in METRIC_KINDS:
            write_metrics(spec, values)
        elif spec["kind"] == "report":
            write_report(spec, existing_results() or values, source)
        else:
            write_other(spec, values)
        written.append(spec["path"])
    checks = {}
    for name in CHECKS_RUN:
        found = run_check(name, existing_results() or values, own)
        checks[name] = not found
        problems += [problem for problem in found if problem not in problems]
    if CHECKS_RUN:
        write_json(os.path.join("checks", AGENT + ".json"), {"agent": AGENT, "checks": checks, "toy_output": True})
    reported = existing_results() if any(spec["kind"] in METRIC_KINDS for spec in OUTPUTS) else values
    print("${RESULT_PREFIX}" + json.dumps({
        "agent": AGENT,
        "data": source,
        "values": {key: value for key, value in reported.items() if finite(value)},
        "files": written,
        "checks": checks,
        "skipped": CHECKS_SKIPPED,
        "problems": problems,
    }))


main()
`;
