"""Where a team design carries its task information (the paper's Figure 5), estimated with numpy and scikit-learn.

Run by `mass analyze workflows` (src/analyze/workflow-information.ts) as

    python3 workflow_information.py embed-offline <input.json>   # texts -> TF-IDF + truncated SVD vectors
    python3 workflow_information.py analyze <input.json>         # vectors + samples -> mutual information

and prints one JSON object on stdout. Everything is seeded: the same input gives the same output.

The estimator: each component's embeddings and the task embeddings are reduced by PCA to a few dimensions, then the
mutual information between them is the Gaussian one, I = 1/2 (log det Cxx + log det Cyy - log det C), from the
correlation matrices of the standardised columns (a small ridge keeps a degenerate block finite). Its positive bias
(it grows with the dimensions over the samples) is measured by a permutation baseline: the tasks are shuffled among
the designs, seeded, and the baseline is the mean information over the shuffles; the adjusted value is the
information minus that baseline. Intervals resample tasks with replacement (all of a task's samples together, since
the agents of one design are not independent), each resample adjusted by shuffles of its own.
"""

import json
import sys

import numpy as np
from sklearn.decomposition import PCA, TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer

RIDGE = 1e-9


def embed_offline(texts, dimensions):
    """TF-IDF (unigrams and bigrams, sublinear term frequency) and a truncated SVD, rows L2-normalised."""
    if len(texts) < 2:
        raise ValueError("the offline embedding needs at least two texts")
    tfidf = TfidfVectorizer(lowercase=True, ngram_range=(1, 2), sublinear_tf=True, norm="l2")
    matrix = tfidf.fit_transform(texts)
    size = min(dimensions, matrix.shape[1] - 1, matrix.shape[0] - 1)
    if size < 1:
        raise ValueError("the texts have too few distinct words for an offline embedding")
    svd = TruncatedSVD(n_components=size, algorithm="randomized", n_iter=10, random_state=0)
    vectors = svd.fit_transform(matrix)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    vectors = vectors / norms
    return {
        "dimensions": int(size),
        "vocabulary": int(matrix.shape[1]),
        "explainedVariance": float(np.sum(svd.explained_variance_ratio_)),
        "vectors": [[round(float(value), 10) for value in row] for row in vectors],
    }


def standardise(z):
    """Columns centred and scaled to unit variance along axis -2; a constant column becomes zeros."""
    centred = z - z.mean(axis=-2, keepdims=True)
    scale = centred.std(axis=-2, ddof=1, keepdims=True)
    scale[scale == 0] = 1.0
    return centred / scale


def gaussian_mi_batch(x, ys):
    """The Gaussian mutual information (nats) between x (m, dx) and each of ys (p, m, dy): an array of p values."""
    p, m, dy = ys.shape
    dx = x.shape[1]
    z = np.concatenate([np.broadcast_to(x, (p, m, dx)), ys], axis=2)
    z = standardise(z)
    c = np.einsum("pmi,pmj->pij", z, z) / (m - 1)
    c = c + RIDGE * np.eye(dx + dy)
    _, logdet = np.linalg.slogdet(c)
    _, logdet_x = np.linalg.slogdet(c[:, :dx, :dx])
    _, logdet_y = np.linalg.slogdet(c[:, dx:, dx:])
    return np.maximum(0.5 * (logdet_x + logdet_y - logdet), 0.0)


def gaussian_mi(x, y):
    """The Gaussian mutual information (nats) between the columns of x (m, dx) and of y (m, dy)."""
    return float(gaussian_mi_batch(np.asarray(x, float), np.asarray(y, float)[None, :, :])[0])


def pca(vectors, dimensions):
    """A PCA of the rows (deterministic: full SVD, signs fixed by scikit-learn) to at most `dimensions`."""
    rank = int(np.linalg.matrix_rank(vectors - vectors.mean(axis=0))) if len(vectors) > 1 else 0
    size = min(dimensions, rank)
    if size < 1:
        return None
    model = PCA(n_components=size, svd_solver="full")
    model.fit(vectors)
    return model


def permutations(rng, values, count):
    """`count` independent random orders of `values`, one per row."""
    return rng.permuted(np.tile(values, (count, 1)), axis=1)


def percentile_interval(values, confidence):
    if len(values) == 0:
        return None
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return [float(low), float(high)]


def estimate(x, y_rows_for, task_of_row, shuffle_rows, settings, rng, minimum):
    """Information, permutation baseline, adjusted value, p-value and bootstrap intervals for one cell.

    x: (m, dx), one row per sample; task_of_row: (m,), the task of each sample. y_rows_for(rows) gives the rows of y
    paired with x[rows] (rows: sample indices, repeated in a resample); shuffle_rows(rng, rows, count) gives them with the
    pairing broken, `count` times over (count, rows, dy). `minimum`: the fewest samples an estimate is made from.
    """
    m = len(x)
    tasks = sorted(set(task_of_row.tolist()))
    if len(tasks) < 2:
        return {"samples": m, "tasks": len(tasks), "skipped": "fewer than 2 tasks"}
    if m < minimum:
        return {"samples": m, "tasks": len(tasks), "skipped": f"{m} samples, fewer than the {minimum} needed"}
    rows = np.arange(m)
    observed = gaussian_mi(x, y_rows_for(rows))
    null = gaussian_mi_batch(x, shuffle_rows(rng, rows, settings["permutations"]))
    baseline = float(null.mean())
    p_value = float((1 + np.sum(null >= observed - 1e-12)) / (len(null) + 1))

    # The bootstrap resamples tasks, each with all its samples: the agents of one design are not independent.
    by_task = [rows[task_of_row == task] for task in tasks]
    boot_raw = []
    boot_adjusted = []
    for _ in range(settings["bootstrap"]):
        drawn = rng.choice(len(tasks), size=len(tasks), replace=True)
        picked = np.concatenate([by_task[index] for index in drawn])
        paired = np.concatenate(
            [y_rows_for(picked)[None], shuffle_rows(rng, picked, settings["bootstrapPermutations"])]
        )
        values = gaussian_mi_batch(x[picked], paired)
        boot_raw.append(float(values[0]))
        boot_adjusted.append(float(values[0] - values[1:].mean()))
    return {
        "samples": m,
        "tasks": len(tasks),
        "mi": observed,
        "baseline": baseline,
        "adjusted": observed - baseline,
        "pValue": p_value,
        "interval": percentile_interval(np.array(boot_raw), settings["confidence"]),
        "adjustedInterval": percentile_interval(np.array(boot_adjusted), settings["confidence"]),
    }


def analyze(spec):
    vectors = np.asarray(spec["vectors"], float)
    settings = {
        "permutations": int(spec["permutations"]),
        "bootstrap": int(spec["bootstrap"]),
        "bootstrapPermutations": int(spec["bootstrapPermutations"]),
        "confidence": float(spec["confidence"]),
    }
    task_vectors = vectors[[task["vector"] for task in spec["tasks"]]]
    n_tasks = len(task_vectors)
    if n_tasks < 2:
        raise ValueError("the analysis needs at least two tasks")
    # The task embeddings keep at most one component fewer than there are tasks (`pca` caps by rank).
    dimensions = spec.get("dimensions") or 3
    task_pca = pca(task_vectors, dimensions)
    if task_pca is None:
        raise ValueError("every task has the same embedding: there is no task information to find")
    task_reduced = task_pca.transform(task_vectors)
    components = spec["components"]

    component_pca = {}
    component_reduced = {}
    for component in components:
        used = sorted({item["vector"] for series in spec["series"] for item in series["items"] if item["component"] == component})
        model = pca(vectors[used], dimensions) if len(used) > 1 else None
        component_pca[component] = model
        if model is not None:
            component_reduced[component] = dict(zip(used, model.transform(vectors[used])))

    rng = np.random.default_rng(int(spec["seed"]))
    results = []
    for series in spec["series"]:
        information = []
        by_agent = {}
        for component in components:
            items = [item for item in series["items"] if item["component"] == component]
            model = component_pca[component]
            if model is None:
                information.append(
                    {"component": component, "samples": len(items), "tasks": len({item["task"] for item in items}),
                     "skipped": "its texts are all alike" if items else "no design has it"}
                )
                continue
            for item in items:
                by_agent.setdefault(item["agent"], {})[component] = item
            x = np.array([component_reduced[component][item["vector"]] for item in items]).reshape(len(items), -1)
            task_of_row = np.array([item["task"] for item in items], dtype=int)
            dy = task_reduced.shape[1]

            def y_rows_for(rows):
                return task_reduced[task_of_row[rows]]

            def shuffle_rows(rng, rows, count):
                # The designs' tasks shuffled: the tasks present are permuted, every row of a task moving together
                # (in a resample, every copy of a task too), so a design's agents all get one other task.
                present, inverse = np.unique(task_of_row[rows], return_inverse=True)
                return task_reduced[permutations(rng, present, count)[:, inverse]]

            cell = estimate(
                x, y_rows_for, task_of_row, shuffle_rows, settings, rng, minimum=x.shape[1] + dy + 2
            )
            information.append({"component": component, **cell})

        dependence = []
        for first_index, first in enumerate(components):
            for second in components[first_index + 1 :]:
                if component_pca[first] is None or component_pca[second] is None:
                    continue
                pairs = [agent for agent in by_agent.values() if first in agent and second in agent]
                if not pairs:
                    dependence.append({"first": first, "second": second, "samples": 0, "tasks": 0, "skipped": "no agent has both"})
                    continue
                xa = np.array([component_reduced[first][agent[first]["vector"]] for agent in pairs])
                xb = np.array([component_reduced[second][agent[second]["vector"]] for agent in pairs])
                task_of_row = np.array([agent[first]["task"] for agent in pairs], dtype=int)

                def y_rows_for(rows, xb=xb):
                    return xb[rows]

                def shuffle_rows(rng, rows, count, xb=xb):
                    # The pairing of agents broken: each agent present gets the second component of another one (in
                    # a resample, every copy of an agent the same one).
                    present, inverse = np.unique(rows, return_inverse=True)
                    return xb[permutations(rng, present, count)[:, inverse]]

                cell = estimate(
                    xa, y_rows_for, task_of_row, shuffle_rows, settings, rng, minimum=xa.shape[1] + xb.shape[1] + 2
                )
                dependence.append({"first": first, "second": second, **cell})
        results.append({"label": series["label"], "information": information, "dependence": dependence})

    return {
        "dimensions": {
            "task": int(task_reduced.shape[1]),
            "components": {
                component: (int(model.n_components_) if model is not None else 0)
                for component, model in component_pca.items()
            },
        },
        "explainedVariance": {
            "task": float(np.sum(task_pca.explained_variance_ratio_)),
            "components": {
                component: (float(np.sum(model.explained_variance_ratio_)) if model is not None else 0.0)
                for component, model in component_pca.items()
            },
        },
        "series": results,
    }


def main(argv):
    if len(argv) != 3 or argv[1] not in ("embed-offline", "analyze"):
        print("usage: workflow_information.py embed-offline|analyze <input.json>", file=sys.stderr)
        return 2
    with open(argv[2], encoding="utf-8") as handle:
        spec = json.load(handle)
    try:
        if argv[1] == "embed-offline":
            result = embed_offline(spec["texts"], int(spec["dimensions"]))
        else:
            result = analyze(spec)
    except ValueError as error:
        print(f"workflow_information.py: {error}", file=sys.stderr)
        return 3
    json.dump(result, sys.stdout, allow_nan=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
