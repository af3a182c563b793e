"""The whole state of a training run, saved every `resumeEvery` steps, so that a run stopped half-way (a preempted
node, a crash at hour 15) goes on from there and ends as an uninterrupted run would.

    <out>/resume/step-NNNNNN/
        model and optimizer   torch.distributed.checkpoint (DCP): the LoRA weights and AdamW's moments, each process
                              writing its own shard (FSDP2) or the replicated tensors once (DDP)
        rng-<rank>.pt         each process's random generators (LoRA dropout draws from them)
        progress.json         the step reached and the records so far: losses, validation, checkpoints, tokens;
                              written last, by process 0
The sampler's position is the step: the windows are drawn once, in plan.json, from the seed. The learning rate is a
function of the step. A state is written into `step-NNNNNN.partial/` and renamed when complete, so a process killed
while saving leaves the previous state to resume from; only the latest state is kept.
"""

from __future__ import annotations

import json
import os
import shutil
import warnings
from typing import Any, Dict

import torch
import torch.distributed.checkpoint as dcp
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_state_dict, set_state_dict

from replicas import Replicas, barrier
from resume_folder import PROGRESS_FILE, RESUME_FOLDER
from window_data import DataError, write_json

# Only the trained (LoRA) weights: the frozen ones are the parent's, read from its files.
OPTIONS = StateDictOptions(ignore_frozen_params=True)
# Loading into the whole model: the frozen weights are not in the state, and are checked to be all that is missing.
LOAD_OPTIONS = StateDictOptions(ignore_frozen_params=True, strict=False)
# One process saves and loads alone, as intended.
warnings.filterwarnings("ignore", message="torch.distributed is disabled, unavailable or uninitialized")


def save(out: str, step: int, module: torch.nn.Module, optimizer: torch.optim.Optimizer, progress: Dict[str, Any],
         replicas: Replicas) -> str:
    folder = os.path.join(out, RESUME_FOLDER)
    final = os.path.join(folder, f"step-{step:06d}")
    partial = f"{final}.partial"
    if replicas.main:
        shutil.rmtree(partial, ignore_errors=True)
        os.makedirs(partial)
    barrier(replicas)
    model_state, optimizer_state = get_state_dict(module, optimizer, options=OPTIONS)
    dcp.save({"model": model_state, "optimizer": optimizer_state}, checkpoint_id=partial)
    torch.save(random_state(), os.path.join(partial, f"rng-{replicas.rank}.pt"))
    barrier(replicas)
    if replicas.main:
        write_json(os.path.join(partial, PROGRESS_FILE), {**progress, "step": step})
        os.replace(partial, final)
        for name in os.listdir(folder):
            if name != os.path.basename(final):
                shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
    barrier(replicas)
    return final


def load(path: str, module: torch.nn.Module, optimizer: torch.optim.Optimizer, replicas: Replicas) -> Dict[str, Any]:
    """Puts the saved LoRA weights, optimizer moments and random generators back; returns the progress record."""
    model_state, optimizer_state = get_state_dict(module, optimizer, options=OPTIONS)
    state = {"model": model_state, "optimizer": optimizer_state}
    dcp.load(state, checkpoint_id=path)
    result = set_state_dict(module, optimizer, model_state_dict=state["model"], optim_state_dict=state["optimizer"],
                            options=LOAD_OPTIONS)
    trained = {name for name, parameter in module.named_parameters() if parameter.requires_grad}
    missing = [name for name in result.missing_keys if name in trained or name.replace("module.", "", 1) in trained]
    if missing or result.unexpected_keys:
        raise RuntimeError(f"{path} does not match the model being trained (missing {missing[:3]}, unexpected "
                           f"{list(result.unexpected_keys)[:3]}): it was saved for another adapter or model")
    rng = os.path.join(path, f"rng-{replicas.rank}.pt")
    if not os.path.isfile(rng):
        saved = len([name for name in os.listdir(path) if name.startswith("rng-")])
        raise DataError(f"{path} was saved by {saved} training process(es), and this run has {replicas.world}: "
                        f"resume with {saved} (launch.processesPerNode × nodes), or train afresh in another folder")
    restore_random_state(torch.load(rng, weights_only=False))
    with open(os.path.join(path, PROGRESS_FILE), "r", encoding="utf-8") as handle:
        return json.load(handle)


def random_state() -> Dict[str, Any]:
    state = {"cpu": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_random_state(state: Dict[str, Any]) -> None:
    torch.set_rng_state(state["cpu"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
