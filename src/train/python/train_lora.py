#!/usr/bin/env python3
"""LoRA fine-tuning of one MASS generation on the windows that `mass data build` wrote.

    python3 train_lora.py --data <dataset dir> --out <output dir> --config <config.json> [--dry-run]

The dataset directory (src/distill/write-training-data.ts) holds, per split (`train`, `validation`):
  <split>.index.jsonl    one window's metadata per line (task, role, supervisedTokens, ...): what the sampler reads
  <split>.windows.jsonl  the same windows in the same order, with `input_ids` and `labels` (-100: context only)
  stats.json             written last, so its presence means the build finished

The configuration (written by src/train/python-trainer.ts) names the parent model, the seed and every
hyperparameter; src/train/hyperparameters.ts documents them and holds the paper's recipe as defaults: LoRA r 64,
alpha 128, dropout 0.05 on the language model's attention, linear-attention and MLP projections; AdamW (0.9, 0.95);
lr 3e-5, 5 warm-up steps, cosine decay to 10 %; 3 windows per step, the loss averaged per window, then over the step's
windows; validation every `evalEvery` steps, an adapter checkpoint every `checkpointEvery` steps, the checkpoint with
the lowest validation loss chosen and merged into the parent.

The parent is loaded with the class its config.json names (`architectures`), so a Qwen3.5/3.6 checkpoint keeps its
vision tower and the merged model is the same architecture as the parent, servable the same way; LoRA goes only on
the language model's linear layers whose names `loraTargetModules` lists.

Sampling is the TypeScript sampler's (src/distill/window-sampler.ts), ported draw for draw: the same mulberry32
generator from the same seed, tasks in the same order, the same three draws per window (task, pool, window), so
`sample_windows` here and `sampleWindows` there choose the same windows (test/train/python-script.e2e.test.ts checks
it).

Written to the output directory:
  checkpoints/step-NNNNNN/  the LoRA adapter at each checkpoint step
  merged/                   the chosen checkpoint merged into the parent, with the parent's tokenizer and its other
                            small files (processor configuration, generation_config.json)
  report.json               losses, checkpoints, the chosen one, token counts, the model class and the LoRA
                            targets: read back by the TypeScript trainer
  plan.json                 what the run trains on and how (with --dry-run, nothing else is done)

One process: on a machine with several GPUs the model is split across them (device_map="auto"), which fits a larger
model but does not train faster. A run that stops half-way starts again from the parent; the windows drawn are the
same for the same seed.

torch, transformers and peft are imported only to train (requirements.txt pins them), so the data checks, the
sampler and --dry-run run on a plain python3. Exit status: 0 done; 2 bad data, configuration or environment
(the message says what to fix); anything else is a crash, explained in the log.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

IGNORE_INDEX = -100
SPLITS = ("train", "validation")
REPORT_FILE = "report.json"
PLAN_FILE = "plan.json"

# Every key the configuration's `hyper` must hold; the TypeScript side fills in the defaults.
HYPERPARAMETER_KEYS = (
    "loraRank", "loraAlpha", "loraDropout", "loraTargetModules", "learningRate", "adamBetas", "weightDecay",
    "warmupSteps", "minLearningRateRatio", "maxGradNorm", "steps", "batchSize", "orchestratorProbability",
    "evalEvery", "checkpointEvery", "mergeIntoParent", "gradientCheckpointing", "dtype", "lossNormalization",
)


class DataError(Exception):
    """Bad data, configuration or environment: the user can fix it, and the message says how."""


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# ---------------------------------------------------------------------------------------------------------------
# The sampler: a port of src/ranking/seeded-random.ts and src/distill/window-sampler.ts.

MASK32 = 0xFFFFFFFF


class SeededRandom:
    """mulberry32, as `seededRandom` in TypeScript: uniform floats in [0, 1), the same sequence for the same seed.

    JavaScript's `Math.imul`, `^` and `>>>` all work modulo 2**32, so masking every intermediate to 32 bits gives the
    same bits; the final division by 2**32 is exact in both languages.
    """

    def __init__(self, seed: int) -> None:
        if not isinstance(seed, int) or seed < 0 or seed > 2**53 - 1:
            raise DataError(f"seed {seed!r}: use a non-negative integer below 2**53")
        high = seed // 2**32
        self.state = ((seed & MASK32) ^ ((high * 0x9E3779B9) & MASK32)) & MASK32

    def __call__(self) -> float:
        self.state = (self.state + 0x6D2B79F5) & MASK32
        mixed = self.state
        mixed = ((mixed ^ (mixed >> 15)) * (mixed | 1)) & MASK32
        mixed = (mixed ^ ((mixed + (((mixed ^ (mixed >> 7)) * (mixed | 61)) & MASK32)) & MASK32)) & MASK32
        return ((mixed ^ (mixed >> 14)) & MASK32) / 2**32


def _utf16_order(text: str) -> bytes:
    # JavaScript's default sort compares UTF-16 code units; this key gives the same order.
    return text.encode("utf-16-be")


@dataclass
class TaskPools:
    task: str
    orchestrator: List[int]
    others: List[int]
    orchestrator_chance: float


def sampler_pools(windows: Sequence[Dict[str, Any]], orchestrator_probability: float) -> List[TaskPools]:
    """Per task (sorted as JavaScript sorts), the indices of its orchestrator windows and of its other windows."""
    if not 0 <= orchestrator_probability <= 1:
        raise DataError(f"orchestratorProbability {orchestrator_probability}: use a number from 0 to 1")
    by_task: Dict[str, TaskPools] = {}
    for index, window in enumerate(windows):
        pools = by_task.setdefault(window["task"], TaskPools(window["task"], [], [], 0.0))
        (pools.orchestrator if window["role"] == "orchestrator" else pools.others).append(index)
    ordered = [by_task[task] for task in sorted(by_task, key=_utf16_order)]
    for pools in ordered:
        # A task with only one kind of window always draws that kind.
        if not pools.others:
            pools.orchestrator_chance = 1.0
        elif not pools.orchestrator:
            pools.orchestrator_chance = 0.0
        else:
            pools.orchestrator_chance = orchestrator_probability
    return ordered


def sample_windows(windows: Sequence[Dict[str, Any]], steps: int, batch_size: int, seed: int,
                   orchestrator_probability: float) -> List[int]:
    """`steps * batch_size` window indices: a task uniformly, then its orchestrator pool with the task's chance (else
    its subagent and auxiliary windows), then a window of the pool uniformly; with replacement."""
    if not windows:
        raise DataError("there are no training windows to sample from")
    pools = sampler_pools(windows, orchestrator_probability)
    random = SeededRandom(seed)
    draws: List[int] = []
    for _ in range(steps * batch_size):
        task = pools[int(random() * len(pools))]
        pool = task.orchestrator if random() < task.orchestrator_chance else task.others
        draws.append(pool[int(random() * len(pool))])
    return draws


def learning_rate_at(step: int, hyper: Dict[str, Any]) -> float:
    """The rate for 0-based optimizer step `step`: linear warm-up to the peak, then cosine decay that reaches
    `minLearningRateRatio` of the peak on the last step."""
    peak = hyper["learningRate"]
    floor = peak * hyper["minLearningRateRatio"]
    warmup = hyper["warmupSteps"]
    if step < warmup:
        return peak * (step + 1) / warmup
    decay_steps = max(1, hyper["steps"] - 1 - warmup)
    progress = min(1.0, (step - warmup) / decay_steps)
    return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def window_weights(token_counts: Sequence[int], normalization: str) -> List[float]:
    """The weight of each window's summed cross-entropy in the loss of its step (or of the validation set).

    `window`, the official code's: each window's mean over its labelled tokens, then the mean over the windows, so a
    200-token orchestrator window weighs as much as a 20,000-token subagent one and the sampler's one-third share of
    orchestrator windows is a third of the gradient. `token`: the mean over every labelled token, so a window weighs
    what it holds. A window with no labelled token weighs nothing either way.
    """
    if normalization == "window":
        windows = sum(1 for count in token_counts if count > 0)
        return [1.0 / (windows * count) if count > 0 else 0.0 for count in token_counts]
    if normalization == "token":
        tokens = sum(count for count in token_counts if count > 0)
        return [1.0 / tokens if count > 0 else 0.0 for count in token_counts]
    raise DataError(f"lossNormalization {normalization!r}: use \"window\" or \"token\"")


def combined_loss(summed_losses: Sequence[float], token_counts: Sequence[int], normalization: str) -> float:
    """The loss of windows whose summed cross-entropies and labelled-token counts are given."""
    weights = window_weights(token_counts, normalization)
    return sum(weight * loss for weight, loss in zip(weights, summed_losses))


def predicted_tokens(window: Dict[str, Any]) -> int:
    """Positions whose next token is labelled: what the window's loss sums over."""
    return sum(1 for label in window["labels"][1:] if label != IGNORE_INDEX)


def choose_lora_targets(linear_layers: Sequence[str], language_model: str, wanted: Sequence[str]) -> List[str]:
    """The full names of the linear layers LoRA goes on: inside `language_model` (a module path, "" for the whole
    model), outside any vision tower, and named (last part) as one of `wanted`. A wanted name the model lacks is
    passed over (Qwen3 has no linear attention); none matching at all is an error."""
    prefix = f"{language_model}." if language_model else ""
    wanted_names = set(wanted)
    chosen = []
    for name in linear_layers:
        parts = name.split(".")
        if not name.startswith(prefix) or parts[-1] not in wanted_names:
            continue
        # A vision tower is never the language model, whatever get_decoder said.
        if any(part.startswith("vision") or part == "visual" for part in parts):
            continue
        chosen.append(name)
    if not chosen:
        raise DataError(f"loraTargetModules {list(wanted)} names no linear layer of the language model "
                        f"({language_model or 'the model'}); its linear layers end in "
                        f"{sorted({name.split('.')[-1] for name in linear_layers})[:20]}")
    return chosen


def count_by_name(modules: Sequence[str]) -> Dict[str, int]:
    """How many of the modules end in each name: `{"q_proj": 16, ...}`, for the log and the report."""
    counts: Dict[str, int] = {}
    for short in (name.split(".")[-1] for name in modules):
        counts[short] = counts.get(short, 0) + 1
    return dict(sorted(counts.items()))


def evaluation_steps(hyper: Dict[str, Any]) -> List[int]:
    steps = hyper["steps"]
    return sorted({s for s in range(hyper["evalEvery"], steps + 1, hyper["evalEvery"])} | {steps})


def checkpoint_steps(hyper: Dict[str, Any]) -> List[int]:
    steps = hyper["steps"]
    return sorted({s for s in range(hyper["checkpointEvery"], steps + 1, hyper["checkpointEvery"])} | {steps})


# ---------------------------------------------------------------------------------------------------------------
# Data: the index files whole (small), the windows by byte offset (large: one line can hold 49,152 token ids twice).


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
    return config


# ---------------------------------------------------------------------------------------------------------------
# The plan: everything about the run that needs no GPU.


def make_plan(dataset: Dataset, config: Dict[str, Any]) -> Dict[str, Any]:
    hyper = config["hyper"]
    summaries = dataset.train.summaries
    draws = sample_windows(summaries, hyper["steps"], hyper["batchSize"], config["seed"],
                           hyper["orchestratorProbability"])
    draws_by_role: Dict[str, int] = {"orchestrator": 0, "subagent": 0, "auxiliary": 0}
    for index in draws:
        draws_by_role[summaries[index]["role"]] = draws_by_role.get(summaries[index]["role"], 0) + 1
    tasks = {
        pools.task: {"orchestratorWindows": len(pools.orchestrator), "otherWindows": len(pools.others),
                     "orchestratorChance": pools.orchestrator_chance}
        for pools in sampler_pools(summaries, hyper["orchestratorProbability"])
    }
    return {
        "schemaVersion": 1,
        "kind": "python-training-plan",
        "parentModel": config["parentModel"],
        "seed": config["seed"],
        "hyper": hyper,
        "train": {"windows": len(summaries), "supervisedTokens": sum(w["supervisedTokens"] for w in summaries),
                  "tasks": tasks},
        "validation": {"windows": len(dataset.validation),
                       "supervisedTokens": sum(w["supervisedTokens"] for w in dataset.validation.summaries)},
        "drawsByRole": draws_by_role,
        "processedSupervisedTokens": sum(summaries[index]["supervisedTokens"] for index in draws),
        "evaluationSteps": evaluation_steps(hyper),
        "checkpointSteps": checkpoint_steps(hyper),
        "learningRates": {str(step): learning_rate_at(step, hyper)
                          for step in sorted({0, hyper["warmupSteps"] - 1, hyper["warmupSteps"],
                                              hyper["steps"] // 2, hyper["steps"] - 1}) if 0 <= step < hyper["steps"]},
        "draws": draws,
    }


def write_json(path: str, value: Dict[str, Any]) -> None:
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(value, handle, indent=2, allow_nan=False)
        handle.write("\n")
    os.replace(temporary, path)


# ---------------------------------------------------------------------------------------------------------------
# Training (needs torch, transformers and peft).


def _import_training_libraries():
    try:
        import torch  # noqa: F401
        import peft  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as error:
        here = os.path.dirname(os.path.abspath(__file__))
        raise DataError(f"{error.name or error} is not installed for {sys.executable}: "
                        f"pip install -r {os.path.join(here, 'requirements.txt')} (or run with --dry-run)")
    return torch, peft, transformers


def window_loss(model, window: Dict[str, Any], device):
    """Summed cross-entropy over the window's labelled tokens, and their count. Only the positions that predict a
    labelled token get logits: a 49,152-token window's full logits would not fit beside the model."""
    import torch
    import torch.nn.functional as functional

    labels = window["labels"]
    positions = [p for p in range(len(labels) - 1) if labels[p + 1] != IGNORE_INDEX]
    if not positions:
        return torch.zeros((), device=device), 0
    input_ids = torch.tensor([window["input_ids"]], dtype=torch.long, device=device)
    keep = torch.tensor(positions, dtype=torch.long, device=device)
    targets = torch.tensor([labels[p + 1] for p in positions], dtype=torch.long, device=device)
    logits = model(input_ids=input_ids, logits_to_keep=keep, use_cache=False).logits[0]
    return functional.cross_entropy(logits.float(), targets, reduction="sum"), len(positions)


def validation_loss(model, windows: WindowFile, device, normalization: str) -> float:
    import torch

    model.eval()
    losses, counts = [], []
    with torch.no_grad():
        for index in range(len(windows)):
            loss, tokens = window_loss(model, windows.load(index), device)
            losses.append(loss.item())
            counts.append(tokens)
    model.train()
    return combined_loss(losses, counts, normalization)


def parent_model_class(transformers, parent: str):
    """The class the parent's config.json names, when transformers has it and it generates text (a Qwen3.5/3.6
    checkpoint names its image-text class: AutoModelForCausalLM would drop the vision tower, and the merged model
    would no longer be the served architecture); otherwise AutoModelForCausalLM."""
    config = transformers.AutoConfig.from_pretrained(parent)
    for name in config.architectures or []:
        model_class = getattr(transformers, name, None)
        if model_class is not None and name.endswith(("ForCausalLM", "ForConditionalGeneration")):
            return model_class
    return transformers.AutoModelForCausalLM


def lora_target_modules(model, torch, wanted: Sequence[str]) -> List[str]:
    """`choose_lora_targets` on the model's linear layers, the language model being what transformers' get_decoder
    finds (Qwen3: `model`; Qwen3.5/3.6: `model.language_model`)."""
    names = {id(module): name for name, module in model.named_modules()}
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else model
    language_model = names.get(id(decoder), "")
    linear_layers = [name for name, module in model.named_modules() if isinstance(module, torch.nn.Linear)]
    return choose_lora_targets(linear_layers, language_model, wanted)


def copy_parent_files(parent: str, merged: str) -> None:
    """The parent's small files that neither the weights nor the tokenizer wrote (the processor's configuration of a
    model with a vision tower, generation_config.json, a chat template): the merged model is served as the parent
    was. Only for a parent on disk; weights are never copied."""
    if not os.path.isdir(parent):
        return
    for name in sorted(os.listdir(parent)):
        source, target = os.path.join(parent, name), os.path.join(merged, name)
        if (os.path.isfile(source) and not os.path.exists(target)
                and name.endswith((".json", ".jinja", ".txt", ".model", ".tiktoken"))
                and not name.endswith(".index.json")):
            with open(source, "rb") as reader, open(target, "wb") as writer:
                writer.write(reader.read())


def train(dataset: Dataset, config: Dict[str, Any], out: str, plan: Dict[str, Any]) -> Dict[str, Any]:
    torch, peft, transformers = _import_training_libraries()
    hyper = config["hyper"]
    parent = config["parentModel"]
    torch.manual_seed(config["seed"])
    dtype = getattr(torch, hyper["dtype"])
    device_map = "auto" if torch.cuda.is_available() else None
    model_class = parent_model_class(transformers, parent)
    log(f"loading {parent} as {model_class.__name__} ({hyper['dtype']}, {'cuda' if device_map else 'cpu'})")
    model = model_class.from_pretrained(parent, dtype=dtype, device_map=device_map)
    targets = lora_target_modules(model, torch, hyper["loraTargetModules"])
    log(f"LoRA on {len(targets)} linear layers: {count_by_name(targets)}")
    if hyper["gradientCheckpointing"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()
    # Full names, so that peft cannot also match a same-named layer of a vision tower.
    model = peft.get_peft_model(model, peft.LoraConfig(
        r=hyper["loraRank"], lora_alpha=hyper["loraAlpha"], lora_dropout=hyper["loraDropout"],
        target_modules=targets, bias="none", task_type="CAUSAL_LM"))
    model.print_trainable_parameters()
    device = model.get_input_embeddings().weight.device
    trainable = [parameter for parameter in model.parameters() if parameter.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=hyper["learningRate"], betas=tuple(hyper["adamBetas"]),
                                  weight_decay=hyper["weightDecay"])
    draws = plan["draws"]
    evaluations, checkpoints_at = set(plan["evaluationSteps"]), set(plan["checkpointSteps"])
    normalization = hyper["lossNormalization"]
    report: Dict[str, Any] = {"trainLoss": [], "validationLoss": [], "checkpoints": [], "supervisedTokensProcessed": 0,
                              "modelClass": model_class.__name__, "loraTargets": count_by_name(targets)}
    started = time.time()
    model.train()
    for step in range(hyper["steps"]):
        rate = learning_rate_at(step, hyper)
        for group in optimizer.param_groups:
            group["lr"] = rate
        batch = [dataset.train.load(index) for index in draws[step * hyper["batchSize"]:(step + 1) * hyper["batchSize"]]]
        counts = [predicted_tokens(window) for window in batch]
        batch_tokens = sum(counts)
        step_loss = 0.0
        # One window at a time (its gradient added to the step's), each weighted as lossNormalization says.
        for window, weight in zip(batch, window_weights(counts, normalization)):
            if weight == 0:
                continue
            loss, _ = window_loss(model, window, device)
            (loss * weight).backward()
            step_loss += loss.item() * weight
        torch.nn.utils.clip_grad_norm_(trainable, hyper["maxGradNorm"])
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        done = step + 1
        report["supervisedTokensProcessed"] += sum(
            dataset.train.summaries[index]["supervisedTokens"]
            for index in draws[step * hyper["batchSize"]:done * hyper["batchSize"]])
        if not math.isfinite(step_loss):
            raise RuntimeError(f"training diverged: the loss is {step_loss} at step {done}; lower learningRate")
        report["trainLoss"].append({"step": done, "loss": step_loss, "learningRate": rate})
        log(f"step {done}/{hyper['steps']} loss {step_loss:.4f} lr {rate:.3e} tokens {batch_tokens} "
            f"elapsed {time.time() - started:.0f}s")
        if done in evaluations:
            loss = validation_loss(model, dataset.validation, device, normalization)
            report["validationLoss"].append({"step": done, "loss": loss})
            log(f"step {done} validation loss {loss:.4f}")
        if done in checkpoints_at:
            relative = os.path.join("checkpoints", f"step-{done:06d}")
            model.save_pretrained(os.path.join(out, relative))
            loss = next(point["loss"] for point in report["validationLoss"] if point["step"] == done)
            report["checkpoints"].append({"step": done, "path": relative, "validationLoss": loss})
            log(f"saved {relative}")
    chosen = min(report["checkpoints"], key=lambda checkpoint: (checkpoint["validationLoss"], checkpoint["step"]))
    log(f"chosen checkpoint: step {chosen['step']} (validation loss {chosen['validationLoss']:.4f})")
    merged_path = None
    if hyper["mergeIntoParent"]:
        del model, optimizer
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        merged_path = "merged"
        log(f"merging {chosen['path']} into {parent}")
        base = model_class.from_pretrained(parent, dtype=dtype, device_map=device_map)
        merged = peft.PeftModel.from_pretrained(base, os.path.join(out, chosen["path"])).merge_and_unload()
        merged.save_pretrained(os.path.join(out, merged_path), safe_serialization=True)
        transformers.AutoTokenizer.from_pretrained(parent).save_pretrained(os.path.join(out, merged_path))
        copy_parent_files(parent, os.path.join(out, merged_path))
    return {
        "schemaVersion": 1,
        "kind": "python-training-report",
        **report,
        "steps": hyper["steps"],
        "chosenCheckpoint": chosen,
        "adapterPath": chosen["path"],
        "mergedPath": merged_path,
        "seconds": time.time() - started,
        "versions": {"python": sys.version.split()[0], "torch": torch.__version__,
                     "transformers": transformers.__version__, "peft": peft.__version__},
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="the dataset directory written by `mass data build`")
    parser.add_argument("--out", required=True, help="where checkpoints, the merged model and report.json go")
    parser.add_argument("--config", required=True, help="the JSON configuration written by the TypeScript trainer")
    parser.add_argument("--dry-run", action="store_true", help="check the data, write plan.json, train nothing")
    args = parser.parse_args(argv)
    try:
        config = read_config(args.config)
        dataset = load_dataset(args.data)
        os.makedirs(args.out, exist_ok=True)
        plan = make_plan(dataset, config)
        write_json(os.path.join(args.out, PLAN_FILE), plan)
        summary = {key: value for key, value in plan.items() if key not in ("draws", "hyper")}
        log("plan: " + json.dumps(summary))
        if args.dry_run:
            # Read every window once: the checks a real run would make as it goes.
            for windows in (dataset.train, dataset.validation):
                for index in range(len(windows)):
                    windows.load(index)
            log(f"dry run: {len(dataset.train)} training and {len(dataset.validation)} validation windows check out")
            return 0
        report = train(dataset, config, args.out, plan)
        write_json(os.path.join(args.out, REPORT_FILE), report)
        log(f"wrote {os.path.join(args.out, REPORT_FILE)}")
        return 0
    except DataError as error:
        print(f"error: {error}", file=sys.stderr, flush=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())
