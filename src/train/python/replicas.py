"""Data parallelism through torch.distributed: which windows this process trains on, on which devices, and the
engine (DDP or FSDP2) that averages the gradients. No gradient is ever summed by hand.

The launcher (launch_plan.py) starts one process per replica with torchrun, which sets RANK, WORLD_SIZE and
LOCAL_RANK; without them this is the only process and nothing is wrapped.
- `ddp`: every replica holds the whole model, on one GPU or split layer by layer over `gpusPerReplica` GPUs (a naive
  pipeline inside the replica, the official "2 GPUs per replica"); DDP averages the LoRA gradients over replicas. The
  frozen weights are not broadcast (every replica loads them from the same files).
- `fsdp`: FSDP2's `fully_shard` on every decoder layer and on the whole, one GPU per process; each process holds its
  shard of every weight, and the LoRA gradients are reduce-scattered.
A step's windows are dealt out round-robin. Every process makes the same number of forward and backward passes (an
engine's collectives must line up), so a process with fewer windows than the others pads with a two-token window
whose loss is multiplied by zero. Each process scales its loss by the number of processes, so that the engine's
average of the processes' gradients is the gradient of the step's whole loss.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, TypeVar

import torch
import torch.distributed as dist

from window_data import LOGGING

T = TypeVar("T")


def die_with_parent() -> None:
    """Linux: this process is killed when the one that started it dies, so that a SIGKILLed `mass train` or
    launcher leaves no training process holding GPUs behind."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        return
    if os.getppid() == 1:
        os._exit(1)


@dataclass
class Replicas:
    rank: int = 0
    world: int = 1
    local_rank: int = 0
    sharding: str = "ddp"
    # The GPUs of this process's replica (none on CPU); inputs go to the first.
    gpus: List[int] = field(default_factory=list)
    mesh: Any = None

    @property
    def main(self) -> bool:
        return self.rank == 0

    @property
    def device(self) -> torch.device:
        return torch.device("cuda", self.gpus[0]) if self.gpus else torch.device("cpu")

    @property
    def distributed(self) -> bool:
        return self.world > 1


def start(launch: Dict[str, Any]) -> Replicas:
    """The process group for torchrun's environment (NCCL for CUDA tensors, gloo for CPU ones), and this process's
    GPUs: `gpusPerReplica` consecutive ones from LOCAL_RANK × gpusPerReplica."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    per_replica = launch.get("gpusPerReplica") or 1
    gpus: List[int] = []
    if torch.cuda.is_available():
        first = local_rank * per_replica
        gpus = list(range(first, first + per_replica))
        if gpus[-1] >= torch.cuda.device_count():
            raise RuntimeError(f"process {rank} needs GPUs {gpus}, only {torch.cuda.device_count()} are visible")
        torch.cuda.set_device(gpus[0])
    replicas = Replicas(rank, world, local_rank, launch["sharding"], gpus)
    LOGGING["enabled"] = replicas.main
    if world > 1:
        dist.init_process_group(backend="cuda:nccl,cpu:gloo" if gpus else "gloo")
        if replicas.sharding == "fsdp":
            from torch.distributed.device_mesh import init_device_mesh

            replicas.mesh = init_device_mesh("cuda" if gpus else "cpu", (world,))
    return replicas


def load_placement(replicas: Replicas) -> Dict[str, Any]:
    """`from_pretrained` arguments that put the model where this process trains it: split over the replica's GPUs
    (ddp), on its one GPU (ddp, one GPU), or on the CPU first (fsdp: fully_shard moves each shard to the GPU)."""
    if not replicas.gpus or replicas.sharding == "fsdp":
        return {}
    if len(replicas.gpus) == 1:
        return {"device_map": {"": replicas.gpus[0]}}
    memory = {index: 0 for index in range(torch.cuda.device_count())}
    for index in replicas.gpus:
        memory[index] = torch.cuda.get_device_properties(index).total_memory
    return {"device_map": "auto", "max_memory": memory}


def wrap(replicas: Replicas, module: torch.nn.Module, layers: Sequence[torch.nn.Module],
         dtype: torch.dtype) -> torch.nn.Module:
    """The engine around `module` (a WindowLoss); `layers` are the decoder layers, FSDP2's units."""
    if not replicas.distributed:
        return module
    if replicas.sharding == "fsdp":
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

        # Weights in the model's dtype and LoRA in float32 share a unit: gather both in the model's dtype (as the
        # official bf16 autocast computes), reduce gradients in float32.
        policy = MixedPrecisionPolicy(param_dtype=dtype, reduce_dtype=torch.float32)
        for layer in layers:
            fully_shard(layer, mesh=replicas.mesh, mp_policy=policy)
        fully_shard(module, mesh=replicas.mesh, mp_policy=policy)
        return module
    from torch.nn.parallel import DistributedDataParallel

    frozen = [name for name, parameter in module.named_parameters() if not parameter.requires_grad]
    DistributedDataParallel._set_params_and_buffers_to_ignore_for_model(module, frozen)
    device_ids = [replicas.gpus[0]] if len(replicas.gpus) == 1 else None
    return DistributedDataParallel(module, device_ids=device_ids)


@contextlib.contextmanager
def gradient_sync(module: torch.nn.Module, replicas: Replicas, sync: bool):
    """Gradients are averaged over the processes only on the step's last backward pass."""
    if not replicas.distributed or sync:
        if replicas.sharding == "fsdp" and replicas.distributed:
            module.set_requires_gradient_sync(True)
        yield
    elif replicas.sharding == "fsdp":
        module.set_requires_gradient_sync(False)
        yield
    else:
        with module.no_sync():
            yield


def deal(replicas: Replicas, items: Sequence[T]) -> List[Optional[T]]:
    """This process's share of `items`, round-robin, padded with None so that every process gets as many."""
    per_process = -(-len(items) // replicas.world)
    return [items[slot * replicas.world + replicas.rank] if slot * replicas.world + replicas.rank < len(items)
            else None for slot in range(per_process)]


def sum_over_processes(replicas: Replicas, values: List[float]) -> List[float]:
    """Element-wise sum over the processes of a few numbers (token counts, losses: metrics, not gradients)."""
    if not replicas.distributed:
        return list(values)
    tensor = torch.tensor(values, dtype=torch.float64, device=replicas.device)
    dist.all_reduce(tensor)
    return tensor.tolist()


def barrier(replicas: Replicas) -> None:
    if replicas.distributed:
        dist.barrier()


def finish(replicas: Replicas) -> None:
    """Waits until every process is done with its collectives. The process group is not destroyed: a training
    process leaves through os._exit (train_lora.py's `leave`), because freeing a gloo group from Python can hang for
    ever. In torch 2.13, ~ProcessGroupGloo joins its work thread while holding the GIL, and that thread may still be
    releasing the last collective's tensors, which needs the GIL. CI saw this as a resumed run whose second process
    never ended: its DDP wrapper, freed as `train` returned, held the last reference to the destroyed group."""
    barrier(replicas)
