"""The training data and the configuration, read and checked with no torch.

The dataset directory (src/distill/write-training-data.ts) holds, per split (`train`, `validation`):
  <split>.index.jsonl    one window's metadata per line (task, role, tokens, supervisedTokens, ...): what the
                         sampler and the memory planner read
  <split>.windows.jsonl  the same windows in the same order, with `input_ids` and `labels` (-100: context only)
  stats.json             written last, so its presence means the build finished
The index files are read whole (small); the windows by byte offset (large: one line can hold 49,152 token ids twice).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any, Dict, List

IGNORE_INDEX = -100
SPLITS = ("train", "validation")

# Every key the configuration's `hyper` must hold; the TypeScript side (src/train/hyperparameters.ts) fills in the
# defaults.
HYPERPARAMETER_KEYS = (
    "loraRank", "loraAlpha", "loraDropout", "loraTargetModules", "learningRate", "adamBetas", "weightDecay",
    "warmupSteps", "minLearningRateRatio", "maxGradNorm", "steps", "batchSize", "orchestratorProbability",
    "evalEvery", "checkpointEvery", "mergeIntoParent", "gradientCheckpointing", "dtype", "lossNormalization",
    "lossChunkSize", "resumeEvery",
)
LAUNCH_DEFAULTS = {"processesPerNode": None, "nodes": 1, "nodeRank": 0, "rdzvEndpoint": None,
                   "gpusPerReplica": None, "sharding": "ddp", "gpuMemoryGiB": None}


class DataError(Exception):
    """Bad data, configuration or environment: the user can fix it, and the message says how."""


# Only the first of several training processes logs (replicas.start turns the others off): they all say the same.
LOGGING = {"enabled": True}


def log(message: str) -> None:
    if LOGGING["enabled"]:
        print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def write_json(path: str, value: Dict[str, Any]) -> None:
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2, allow_nan=False)
        handle.write("\n")
    os.replace(temporary, path)


def read_json_lines(path: str, what: str) -> List[Dict[str, Any]]:
    if not os.path.isfile(path):
        raise DataError(f"{path} is missing: expected {what}; run `mass data build` again")
    records = []
    with open(path, "r", encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise DataError(f"{path}:{number} is not valid JSON ({error}); run `mass data build` again")
            for field in ("id", "task", "role", "supervisedTokens"):
                if field not in record:
                    raise DataError(f"{path}:{number} has no \"{field}\": it is not {what}")
            records.append(record)
    return records


class WindowFile:
    """The windows of one split, read one at a time and checked against their line of the index."""

    def __init__(self, path: str, summaries: List[Dict[str, Any]]) -> None:
        if not os.path.isfile(path):
            raise DataError(f"{path} is missing: expected the tokenised windows; run `mass data build` again")
        self.path = path
        self.summaries = summaries
        self.offsets: List[int] = []
        with open(path, "rb") as handle:
            offset = 0
            for line in handle:
                if line.strip():
                    self.offsets.append(offset)
                offset += len(line)
        if len(self.offsets) != len(summaries):
            raise DataError(
                f"{path} holds {len(self.offsets)} windows but its index holds {len(summaries)}: "
                "the build was interrupted or the files come from different builds; run `mass data build` again")

    def __len__(self) -> int:
        return len(self.offsets)

    def load(self, index: int) -> Dict[str, Any]:
        with open(self.path, "rb") as handle:
            handle.seek(self.offsets[index])
            window = json.loads(handle.readline())
        summary = self.summaries[index]
        where = f"{self.path} window {index + 1} ({summary['id']})"
        if window.get("id") != summary["id"]:
            raise DataError(f"{where}: the window is {window.get('id')!r}, its index line says {summary['id']!r}; "
                            "run `mass data build` again")
        input_ids, labels = window.get("input_ids"), window.get("labels")
        if not isinstance(input_ids, list) or not isinstance(labels, list) or len(input_ids) != len(labels):
            raise DataError(f"{where}: input_ids and labels must be lists of the same length")
        supervised = 0
        for token, label in zip(input_ids, labels):
            if label != IGNORE_INDEX:
                if label != token:
                    raise DataError(f"{where}: a label differs from its input id (labels are -100 or the token)")
                supervised += 1
        if supervised != summary["supervisedTokens"]:
            raise DataError(f"{where}: {supervised} labelled tokens, the index says {summary['supervisedTokens']}")
        return window


@dataclass
class Dataset:
    directory: str
    train: WindowFile
    validation: WindowFile


def load_dataset(directory: str) -> Dataset:
    stats_path = os.path.join(directory, "stats.json")
    if not os.path.isfile(stats_path):
        raise DataError(f"{directory} has no stats.json: `mass data build` did not finish there; run it again")
    with open(stats_path, "r", encoding="utf-8") as handle:
        stats = json.load(handle)
    files = {}
    for split in SPLITS:
        summaries = read_json_lines(os.path.join(directory, f"{split}.index.jsonl"), "window summaries")
        expected = stats.get("splits", {}).get(split, {}).get("total", {}).get("windows")
        if expected is not None and expected != len(summaries):
            raise DataError(f"{directory}/{split}.index.jsonl holds {len(summaries)} windows, stats.json says "
                            f"{expected}; run `mass data build` again")
        files[split] = WindowFile(os.path.join(directory, f"{split}.windows.jsonl"), summaries)
    if len(files["train"]) == 0:
        raise DataError(f"{directory} has no training windows: build it from at least one selected episode")
    if len(files["validation"]) == 0:
        raise DataError(f"{directory} has no validation windows, so no checkpoint can be chosen: give "
                        "`mass data build` a validation episode (the rank-16 trajectory of each task)")
    return Dataset(directory, files["train"], files["validation"])


def read_config(path: str) -> Dict[str, Any]:
    try:
        with open(path, "r", encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, json.JSONDecodeError) as error:
        raise DataError(f"{path}: cannot read the configuration ({error})")
    for field in ("parentModel", "seed", "hyper"):
        if field not in config:
            raise DataError(f"{path}: the configuration has no \"{field}\"")
    hyper = config["hyper"]
    missing = [key for key in HYPERPARAMETER_KEYS if key not in hyper]
    unknown = sorted(set(hyper) - set(HYPERPARAMETER_KEYS))
    if missing or unknown:
        raise DataError(f"{path}: hyper is missing {missing} and has unknown {unknown}; this script and "
                        "src/train/hyperparameters.ts must agree")
    if hyper["checkpointEvery"] % hyper["evalEvery"] != 0:
        raise DataError(f"{path}: checkpointEvery {hyper['checkpointEvery']} must be a multiple of evalEvery "
                        f"{hyper['evalEvery']}, so every checkpoint has a validation loss")
    for key in ("lossChunkSize", "resumeEvery"):
        if not isinstance(hyper[key], int) or hyper[key] < 1:
            raise DataError(f"{path}: hyper.{key} {hyper[key]!r}: use a positive integer")
    config["initAdapter"] = config.get("initAdapter")
    if config["initAdapter"] is not None and not os.path.isfile(
            os.path.join(config["initAdapter"], "adapter_config.json")):
        raise DataError(f"{path}: initAdapter {config['initAdapter']} holds no adapter_config.json: name the folder "
                        "of a LoRA adapter (a checkpoint the trainer saved, e.g. train/L1/checkpoints/step-000150)")
    config["launch"] = read_launch(config.get("launch") or {}, path)
    return config


def read_launch(launch: Dict[str, Any], path: str) -> Dict[str, Any]:
    """The launch settings with their defaults; `None` means the trainer chooses (src/train/python/launch_plan.py)."""
    unknown = sorted(set(launch) - set(LAUNCH_DEFAULTS))
    if unknown:
        raise DataError(f"{path}: launch has unknown {unknown}; known: {sorted(LAUNCH_DEFAULTS)}")
    resolved = {**LAUNCH_DEFAULTS, **{key: value for key, value in launch.items() if value is not None}}
    for key in ("processesPerNode", "nodes", "gpusPerReplica"):
        if resolved[key] is not None and (not isinstance(resolved[key], int) or resolved[key] < 1):
            raise DataError(f"{path}: launch.{key} {resolved[key]!r}: use a positive integer")
    if not isinstance(resolved["nodeRank"], int) or not 0 <= resolved["nodeRank"] < resolved["nodes"]:
        raise DataError(f"{path}: launch.nodeRank {resolved['nodeRank']!r}: use 0 to nodes - 1 ({resolved['nodes'] - 1})")
    if resolved["sharding"] not in ("ddp", "fsdp"):
        raise DataError(f"{path}: launch.sharding {resolved['sharding']!r}: use \"ddp\" or \"fsdp\"")
    if resolved["sharding"] == "fsdp" and (resolved["gpusPerReplica"] or 1) > 1:
        raise DataError(f"{path}: launch.gpusPerReplica {resolved['gpusPerReplica']} with sharding fsdp: FSDP2 "
                        "shards the model over every process, one GPU each; drop gpusPerReplica or use ddp")
    if resolved["nodes"] > 1 and not resolved["rdzvEndpoint"]:
        raise DataError(f"{path}: launch.nodes {resolved['nodes']} needs launch.rdzvEndpoint (host:port of node 0, "
                        "reachable from every node)")
    return resolved


