"""One training process: loads the parent with LoRA (fresh, or warm-started from an adapter), trains on its share
of each step's windows under DDP or FSDP2 (replicas.py), validates, saves adapter checkpoints and resume states,
and, in process 0 once every process is done, scores the deployment check's probe (deployment_probe.py), merges the
chosen checkpoint into the parent and writes report.json.

Started by train_lora.py's launcher (`train_lora.py --worker`, directly or through torchrun), which has already
checked the data, drawn the windows (plan.json) and checked that the launch fits in memory.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import os
import shutil
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

import peft
import torch
import transformers

import deployment_probe
import replicas as engine
import resume_folder
import resume_state
from chunked_loss import WindowLoss, labelled_targets
from lora_targets import count_by_name, lora_target_modules
from window_data import Dataset, DataError, WindowFile, log
from window_sampler import combined_loss, learning_rate_at, predicted_tokens, resume_steps, window_weights

# A window that only keeps a process in step with the others: two tokens, its loss multiplied by zero.
PADDING = {"input_ids": [0, 0], "labels": [-100, 0]}


def parent_model_class(parent: str):
    """The class the parent's config.json names, when transformers has it and it generates text (a Qwen3.5/3.6
    checkpoint names its image-text class: AutoModelForCausalLM would drop the vision tower, and the merged model
    would no longer be the served architecture); otherwise AutoModelForCausalLM."""
    config = transformers.AutoConfig.from_pretrained(parent)
    for name in config.architectures or []:
        model_class = getattr(transformers, name, None)
        if model_class is not None and name.endswith(("ForCausalLM", "ForConditionalGeneration")):
            return model_class
    return transformers.AutoModelForCausalLM


def linear_attention_kernels(model) -> Optional[str]:
    """For a model with linear-attention layers (Qwen3.5/3.6): `fla` when transformers will use the
    flash-linear-attention kernels (installed, on CUDA), else `torch`, its reference implementation. None for a model
    without such layers."""
    config = getattr(model.config, "text_config", model.config)
    if "linear_attention" not in (getattr(config, "layer_types", None) or []):
        return None
    return "fla" if torch.cuda.is_available() and importlib.util.find_spec("fla") is not None else "torch"


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
            shutil.copyfile(source, target)


class Trainee:
    """The model being trained, wrapped by its engine, with the calls a step makes."""

    def __init__(self, config: Dict[str, Any], replicas: engine.Replicas) -> None:
        hyper = config["hyper"]
        self.replicas = replicas
        self.dtype = getattr(torch, hyper["dtype"])
        parent = config["parentModel"]
        self.model_class = parent_model_class(parent)
        # The same seed in every process: the same fresh LoRA everywhere, as FSDP2's shards and DDP require.
        torch.manual_seed(config["seed"])
        log(f"loading {parent} as {self.model_class.__name__} ({hyper['dtype']}, "
            f"{'GPUs ' + str(replicas.gpus) if replicas.gpus else 'cpu'})")
        model = self.model_class.from_pretrained(parent, dtype=self.dtype, **engine.load_placement(replicas))
        self.kernels = linear_attention_kernels(model)
        if self.kernels == "torch" and torch.cuda.is_available():
            log("warning: linear attention runs on transformers' reference PyTorch implementation, which is much "
                "slower and holds more activations than the flash-linear-attention kernels: install them "
                "(MASS_TRAINER_CUDA=1 bash scripts/install-trainer.sh)")
        if hyper["gradientCheckpointing"]:
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            model.enable_input_require_grads()
        if config["initAdapter"]:
            # The adapter's own rank, alpha and targets: the run continues it.
            model = peft.PeftModel.from_pretrained(model, config["initAdapter"], is_trainable=True)
            self.targets = sorted(name for name, module in model.get_base_model().named_modules()
                                  if hasattr(module, "lora_A") and len(module.lora_A) > 0)
            log(f"warm start from {config['initAdapter']} (rank {model.peft_config['default'].r})")
        else:
            self.targets = lora_target_modules(model, torch, hyper["loraTargetModules"])
            # Full names, so that peft cannot also match a same-named layer of a vision tower.
            model = peft.get_peft_model(model, peft.LoraConfig(
                r=hyper["loraRank"], lora_alpha=hyper["loraAlpha"], lora_dropout=hyper["loraDropout"],
                target_modules=self.targets, bias="none", task_type="CAUSAL_LM"))
        log(f"LoRA on {len(self.targets)} linear layers: {count_by_name(self.targets)}")
        self.autocast = self.mixed_precision(model, replicas)
        if replicas.main:
            model.print_trainable_parameters()
        self.peft_model = model
        self.loss_module = WindowLoss(model, hyper["lossChunkSize"])
        layers = self.loss_module.causal_lm().get_decoder().layers
        self.module = engine.wrap(replicas, self.loss_module, layers, self.dtype)
        # Each process its own dropout draws.
        torch.manual_seed(config["seed"] * 1009 + 1 + replicas.rank)
        self.trainable = [parameter for parameter in self.module.parameters() if parameter.requires_grad]
        self.optimizer = torch.optim.AdamW(self.trainable, lr=hyper["learningRate"],
                                           betas=tuple(hyper["adamBetas"]), weight_decay=hyper["weightDecay"])

    def mixed_precision(self, model, replicas: engine.Replicas):
        """For a bf16 or fp16 model, as the official trainer does: forward passes under autocast, LoRA's float32
        weights (AdamW's master copy: a 3e-5 update would be lost in bf16) applied to the layer's own half-precision
        input, without the float32 copy of every targeted layer's input that peft would otherwise make."""
        if self.dtype == torch.float32:
            return contextlib.nullcontext
        for module in model.modules():
            if hasattr(module, "lora_A"):
                module.cast_input_dtype_enabled = False
        device_type = "cuda" if replicas.gpus else "cpu"
        return lambda: torch.autocast(device_type, dtype=self.dtype)

    def window_loss(self, window: Dict[str, Any]) -> torch.Tensor:
        input_ids, positions, targets = labelled_targets(window, self.replicas.device)
        with self.autocast():
            return self.module(input_ids, positions, targets)

    def step(self, windows: List[Optional[Dict[str, Any]]], weights: List[float]) -> float:
        """Forward and backward passes over this process's windows (None: padding); returns its share of the step's
        loss. The engine averages the gradients on the last backward pass."""
        share = 0.0
        for slot, (window, weight) in enumerate(zip(windows, weights)):
            with engine.gradient_sync(self.module, self.replicas, sync=slot == len(windows) - 1):
                if window is None or weight == 0:
                    (self.window_loss(PADDING) * 0.0).backward()
                    continue
                loss = self.window_loss(window)
                (loss * (weight * self.replicas.world)).backward()
                share += loss.item() * weight
        return share

    def update(self, rate: float, max_grad_norm: float) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = rate
        torch.nn.utils.clip_grad_norm_(self.trainable, max_grad_norm)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def validation_loss(self, windows: WindowFile, normalization: str) -> float:
        count = len(windows)
        losses, tokens = [0.0] * count, [0.0] * count
        self.module.eval()
        with torch.no_grad():
            for index in engine.deal(self.replicas, list(range(count))):
                if index is None:
                    self.window_loss(PADDING)
                    continue
                window = windows.load(index)
                tokens[index] = predicted_tokens(window)
                if tokens[index]:
                    losses[index] = self.window_loss(window).item()
        self.module.train()
        losses = engine.sum_over_processes(self.replicas, losses)
        tokens = engine.sum_over_processes(self.replicas, tokens)
        return combined_loss(losses, [int(count) for count in tokens], normalization)

    def save_adapter(self, path: str) -> None:
        """The LoRA weights, gathered whole (FSDP2 holds shards), saved by process 0 into `path` atomically."""
        state = {}
        for name, parameter in self.peft_model.named_parameters():
            if parameter.requires_grad:
                whole = parameter.full_tensor() if hasattr(parameter, "full_tensor") else parameter
                if self.replicas.main:
                    state[name] = whole.detach().to("cpu")
        if self.replicas.main:
            partial = f"{path}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            self.peft_model.save_pretrained(partial, state_dict=state)
            shutil.rmtree(path, ignore_errors=True)
            os.replace(partial, path)
        engine.barrier(self.replicas)


def train(dataset: Dataset, config: Dict[str, Any], out: str, plan: Dict[str, Any], resume: bool) -> Optional[Dict]:
    """Trains; process 0 returns the report (after the merge), the others None."""
    hyper = config["hyper"]
    replicas = engine.start(config["launch"])
    trainee = Trainee(config, replicas)
    progress = {"trainLoss": [], "validationLoss": [], "checkpoints": [], "supervisedTokensProcessed": 0,
                "seconds": 0.0}
    start, resumed_from = 0, None
    saved = resume_folder.latest(out) if resume else None
    if saved is not None:
        progress = resume_state.load(saved[0], trainee.module, trainee.optimizer, replicas)
        start = resumed_from = progress.pop("step")
        log(f"resumed from {saved[0]} (step {start} of {hyper['steps']})")
    run_steps(trainee, dataset, hyper, plan, out, progress, start)
    peak_gpu_memory = torch.cuda.max_memory_allocated() if torch.cuda.is_available() else None
    chosen = min(progress["checkpoints"], key=lambda point: (point["validationLoss"], point["step"]))
    # Not on a failure: a process that raised leaves at once, and torchrun stops the others.
    engine.finish(replicas)
    if not replicas.main:
        return None
    log(f"chosen checkpoint: step {chosen['step']} (validation loss {chosen['validationLoss']:.4f})")
    model_class, kernels, targets = trainee.model_class, trainee.kernels, trainee.targets
    del trainee
    probe_ids = deployment_probe.probe_tokens(dataset.train.load(plan["draws"][0])["input_ids"])
    merged_path, probe = finish_model(config, out, chosen["path"], model_class, probe_ids)
    return {
        "schemaVersion": 2,
        "kind": "python-training-report",
        "trainLoss": progress["trainLoss"],
        "validationLoss": progress["validationLoss"],
        "checkpoints": progress["checkpoints"],
        "supervisedTokensProcessed": progress["supervisedTokensProcessed"],
        "modelClass": model_class.__name__,
        "loraTargets": count_by_name(targets),
        "steps": hyper["steps"],
        "chosenCheckpoint": chosen,
        "adapterPath": chosen["path"],
        "mergedPath": merged_path,
        "seconds": progress["seconds"],
        "launch": plan["launch"],
        "resumedFromStep": resumed_from,
        "initAdapter": config["initAdapter"],
        "lossChunkSize": hyper["lossChunkSize"],
        "linearAttentionKernels": kernels,
        "peakGpuMemoryBytes": peak_gpu_memory,
        "probe": deployment_probe.PROBE_FILE,
        "probeGenerationChange": probe["maxGenerationChange"],
        "versions": {"python": sys.version.split()[0], "torch": torch.__version__,
                     "transformers": transformers.__version__, "peft": peft.__version__},
    }


def run_steps(trainee: Trainee, dataset: Dataset, hyper: Dict[str, Any], plan: Dict[str, Any], out: str,
              progress: Dict[str, Any], start: int) -> None:
    replicas, batch = trainee.replicas, hyper["batchSize"]
    draws, normalization = plan["draws"], hyper["lossNormalization"]
    evaluations, checkpoints_at = set(plan["evaluationSteps"]), set(plan["checkpointSteps"])
    resumes = set(resume_steps(hyper))
    started = time.time() - progress["seconds"]
    for step in range(start, hyper["steps"]):
        rate = learning_rate_at(step, hyper)
        indices = draws[step * batch:(step + 1) * batch]
        mine = engine.deal(replicas, list(range(batch)))
        windows = [None if slot is None else dataset.train.load(indices[slot]) for slot in mine]
        counts = [0.0] * batch
        for slot, window in zip(mine, windows):
            if slot is not None:
                counts[slot] = predicted_tokens(window)
        counts = [int(count) for count in engine.sum_over_processes(replicas, counts)]
        weights = window_weights(counts, normalization)
        share = trainee.step(windows, [0.0 if slot is None else weights[slot] for slot in mine])
        step_loss = engine.sum_over_processes(replicas, [share])[0]
        trainee.update(rate, hyper["maxGradNorm"])
        done = step + 1
        progress["supervisedTokensProcessed"] += sum(dataset.train.summaries[index]["supervisedTokens"]
                                                     for index in indices)
        if not math.isfinite(step_loss):
            raise RuntimeError(f"training diverged: the loss is {step_loss} at step {done}; lower learningRate")
        progress["trainLoss"].append({"step": done, "loss": step_loss, "learningRate": rate})
        progress["seconds"] = time.time() - started
        log(f"step {done}/{hyper['steps']} loss {step_loss:.4f} lr {rate:.3e} tokens {sum(counts)} "
            f"elapsed {progress['seconds']:.0f}s")
        if done in evaluations:
            loss = trainee.validation_loss(dataset.validation, normalization)
            progress["validationLoss"].append({"step": done, "loss": loss})
            log(f"step {done} validation loss {loss:.4f}")
        if done in checkpoints_at:
            relative = os.path.join("checkpoints", f"step-{done:06d}")
            trainee.save_adapter(os.path.join(out, relative))
            loss = next(point["loss"] for point in progress["validationLoss"] if point["step"] == done)
            progress["checkpoints"] = [point for point in progress["checkpoints"] if point["step"] != done]
            progress["checkpoints"].append({"step": done, "path": relative, "validationLoss": loss})
            log(f"saved {relative}")
        if done in resumes:
            path = resume_state.save(out, done, trainee.module, trainee.optimizer, progress, replicas)
            log(f"saved the training state to resume from: {path}")


def finish_model(config: Dict[str, Any], out: str, adapter: str, model_class,
                 probe_ids: List[int]) -> Tuple[Optional[str], Dict[str, Any]]:
    """On the CPU (no GPU memory is needed once training is done): the deployment check's probe (probe.json) from
    the parent and the chosen adapter, and, with mergeIntoParent, the adapter merged into the parent with the
    parent's tokenizer and its other small files (the probe's trained side is then the merged weights, as served)."""
    parent = config["parentModel"]
    dtype = getattr(torch, config["hyper"]["dtype"])
    base = model_class.from_pretrained(parent, dtype=dtype)
    model = peft.PeftModel.from_pretrained(base, os.path.join(out, adapter))
    model.eval()
    with model.disable_adapter():
        parent_logprobs = deployment_probe.token_logprobs(model, probe_ids)
    if not config["hyper"]["mergeIntoParent"]:
        trained = deployment_probe.token_logprobs(model, probe_ids)
        probe = deployment_probe.write_probe(out, probe_ids, parent_logprobs, trained, "the parent with the adapter")
        return None, probe
    log(f"merging {adapter} into {parent}")
    merged = model.merge_and_unload()
    merged_path = "merged"
    target = os.path.join(out, merged_path)
    merged.save_pretrained(target, safe_serialization=True)
    transformers.AutoTokenizer.from_pretrained(parent).save_pretrained(target)
    copy_parent_files(parent, target)
    trained = deployment_probe.token_logprobs(merged, probe_ids)
    probe = deployment_probe.write_probe(out, probe_ids, parent_logprobs, trained, "the merged model")
    return merged_path, probe


def refuse(error: DataError, out: str) -> None:
    """A worker's refusal, left for the launcher to report with exit status 2."""
    with open(os.path.join(out, "refusal.txt"), "w", encoding="utf-8") as handle:
        handle.write(str(error))
