"""How many training processes run where, and the exact command that starts them.

With no settings, every visible GPU is used: one process per replica, each replica on the fewest GPUs its memory
estimate fits (memory_plan.py), as many replicas as the GPUs allow. On a machine without a GPU, one process, unless
`processesPerNode` asks for more (gloo: how the tests run two replicas on CPU). One process on one node is started
directly; more go through torchrun (`python -m torch.distributed.run`), which sets each one's rank.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Optional

from window_data import DataError


def visible_gpus() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def resolve_launch(launch: Dict[str, Any], gpus: int, chosen_gpus_per_replica: Optional[int] = None) -> Dict[str, Any]:
    """Processes per node, GPUs per replica and the number of replicas, from the settings (None: choose) and the
    GPUs this node has. `chosen_gpus_per_replica` is the memory planner's choice when the settings leave it open."""
    nodes = launch["nodes"]
    if gpus == 0:
        if launch["gpusPerReplica"] not in (None, 1):
            raise DataError(f"launch.gpusPerReplica {launch['gpusPerReplica']}: this machine has no GPU "
                            "(torch.cuda.is_available() is false); drop the setting or install a CUDA build of torch")
        processes = launch["processesPerNode"] or 1
        per_replica = 1
        device = "cpu"
    else:
        per_replica = launch["gpusPerReplica"] or chosen_gpus_per_replica or 1
        processes = launch["processesPerNode"] or gpus // per_replica
        if processes < 1 or processes * per_replica > gpus:
            raise DataError(f"launch: {launch['processesPerNode'] or processes} processes × {per_replica} GPUs per "
                            f"replica need {max(processes, 1) * per_replica} GPUs, this node has {gpus} visible")
        device = "cuda"
    return {"processesPerNode": processes, "nodes": nodes, "nodeRank": launch["nodeRank"],
            "replicas": processes * nodes, "gpusPerReplica": per_replica, "sharding": launch["sharding"],
            "device": device, "rdzvEndpoint": launch["rdzvEndpoint"]}


def worker_command(resolved: Dict[str, Any], script: str, worker_args: List[str]) -> List[str]:
    """The argv that trains: the worker directly, or torchrun starting `processesPerNode` of them on this node."""
    if resolved["replicas"] == 1:
        return [sys.executable, script, "--worker", *worker_args]
    command = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={resolved['processesPerNode']}"]
    if resolved["nodes"] == 1:
        command.append("--standalone")
    else:
        host, _, port = resolved["rdzvEndpoint"].rpartition(":")
        if not host or not port.isdigit():
            raise DataError(f"launch.rdzvEndpoint {resolved['rdzvEndpoint']!r}: use host:port")
        command += [f"--nnodes={resolved['nodes']}", f"--node-rank={resolved['nodeRank']}", f"--master-addr={host}",
                    f"--master-port={port}"]
    return [*command, script, "--worker", *worker_args]


def warnings(resolved: Dict[str, Any], batch_size: int) -> List[str]:
    notes = []
    if resolved["replicas"] > batch_size:
        notes.append(f"{resolved['replicas']} replicas for {batch_size} windows a step: "
                     f"{resolved['replicas'] - batch_size} replicas wait each step; set hyperparameters.batchSize to "
                     f"a multiple of {resolved['replicas']} (the learning rate may need to follow) or use fewer")
    elif batch_size % resolved["replicas"]:
        notes.append(f"{batch_size} windows a step over {resolved['replicas']} replicas: some replicas train one "
                     "window fewer each step")
    return notes


def script_path() -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_lora.py")
