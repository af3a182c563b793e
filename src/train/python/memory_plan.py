#!/usr/bin/env python3
"""How much GPU memory a LoRA training run needs, per GPU, before anything is loaded: an estimate.

    python memory_plan.py --model-config <config.json or model dir> [--window-tokens 49152] [--labelled-tokens 20000]
        [--gpus 8] [--nodes 1] [--gpu-memory-gib 80] [--sharding ddp|fsdp] [--gpus-per-replica g] [--lora-rank 64]
        [--loss-chunk 512 | --no-loss-chunk] [--dtype bfloat16] [--json]

train_lora.py calls `plan_fit` before it loads a single weight, refuses a launch the estimate says cannot fit
(`refusal_message` names settings that would) and logs `format_table`. The parameters are counted exactly: the model's
class is built from config.json on the meta device (no weights, no download). The activations are not: they come from
formulas whose coefficients were measured, on CPU, with this very stack (transformers 5.18, peft 0.21, bf16 weights,
LoRA r 64 on the default targets), by recording the bytes alive while one decoder layer runs forward and backward at
two sequence lengths (test/train/python/test_memory_plan.py measures a small layer the same way and checks the formula
against it). Where the GPU differs from that CPU measurement it is said where the number is used.

What a GPU holds, and why it is counted so (T window tokens, N labelled, h hidden size, i MLP size, V vocabulary):
- weights: every parameter in the model's dtype. DDP splits a replica's model over its g GPUs layer by layer as
  transformers' device_map "auto" does (`pipeline_split`: GPU 0 first, each up to total/g plus a margin, so GPU 0 holds
  the most and with many GPUs the last may hold nothing); FSDP2 holds 1/ranks of every weight, the unsharded root group (embeddings, output head, vision
  tower: FSDP2 keeps the root gathered from forward to the end of backward) and two gathered decoder layers (the current
  and the prefetched one).
- lora: the LoRA parameters in float32 (peft's default), their gradients and AdamW's two moments: 16 bytes a parameter,
  plus DDP's gradient buckets (4) when there is more than one replica; FSDP2 shards all of it over the ranks (and,
  gathering LoRA in bf16 with the weights, also computes it in bf16, which shrinks LoRA's activations).
- checkpoints: with gradient checkpointing each decoder layer keeps only its input, T × h in the model's dtype.
- working set: one layer recomputed and back-propagated at a time holds what that layer saves for backward plus the
  temporaries of its backward; `layer_bytes_per_token` gives both, per token (see its docstring). Without checkpointing
  every layer's saved tensors stay and only the temporaries are one layer's.
- loss: the final norm's saved tensors (6 bytes per T × h element), the labelled positions' hidden states and their
  gradient (4 bytes per N × h), and the logits: 12 bytes per logit, measured (bf16 logits, their float32 copy, the
  saved log-softmax, its float32 gradient and the bf16 one), min(chunk, N) × V logits when chunked, N × V when not.
  The loss runs before any layer's backward, so a GPU's peak holds the larger of the loss and the working set, not both.
- overhead: CUDA context, cuBLAS and NCCL buffers and allocator fragmentation: a fixed 1.5 GiB plus 5 % of the rest.
  Not measured: a margin.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from typing import Any, Dict, List, Optional, Sequence

DEFAULT_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "in_proj_qkv",
                   "in_proj_z", "out_proj"]
GIB = 1024 ** 3
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
OVERHEAD_FIXED = int(1.5 * GIB)
OVERHEAD_FRACTION = 0.05
LOGIT_BYTES = 12          # per logit of the cross-entropy, forward and backward (measured)
FINAL_NORM_BYTES = 6      # per T × h element: the norm's float32 input copy and its output
LABELLED_HIDDEN_BYTES = 4  # per N × h element: the selected hidden states and their gradient

# Bytes per token that one decoder layer (frozen bf16 weights, no LoRA) saves for backward, measured on CPU with
# transformers 5.18 at several sizes and fitted exactly by these terms (test_memory_plan.py re-measures).
SAVED_PER_HIDDEN = 10              # the two RMSNorms' float32 copies and outputs, the residual adds
SAVED_PER_INTERMEDIATE = 6         # the MLP's gate, up and SiLU outputs in bf16
ATTENTION_PER_HEAD_ELEMENT = 8     # q, k, v and their norms, per element of a head (plain attention, Qwen3)
GATED_QUERY_PER_HEAD_ELEMENT = 9.36  # Qwen3.5/3.6 gated attention: the query and its output gate, per query element
GATED_CONSTANT_PER_HEAD_DIM = 8    # Qwen3.5/3.6 gated attention: a per-token term, per element of one head
LINEAR_KEY_PER_ELEMENT = 8         # Gated DeltaNet: per element of the key heads (the conv and split outputs)
LINEAR_VALUE_PER_ELEMENT = 16.1    # Gated DeltaNet outside its core: z, the gated norm, out_proj's input
# The gated delta rule itself, per element of the value heads: transformers' PyTorch reference (used when
# flash-linear-attention is not installed) saves every chunk's fp32 intermediates and recurrent state, measured; fla's
# fused kernel saves q, k, v, their norms, g, beta and A (read from its source: an estimate, fla is not installed here).
GATED_DELTA_CORE_PER_VALUE_ELEMENT = {"torch": 64.2, "fla": 7.1}
# Temporaries of one layer's backward beyond what it saved, per token (measured): the MLP's gradients (6 i; 2 i with
# LoRA but no dropout), the hidden state's (2 h) and, with LoRA in float32, the float32 results of the LoRA branches
# (10 h, halved in bf16).
TRANSIENT_PER_INTERMEDIATE = 6
TRANSIENT_PER_INTERMEDIATE_LORA_NO_DROPOUT = 2
TRANSIENT_PER_HIDDEN = 2
LORA_TRANSIENT_PER_HIDDEN = 10


def choose_lora_targets(linear_layers: Sequence[str], language_model: str, wanted: Sequence[str]) -> List[str]:
    """train_lora's rule (lora_targets.py), copied so that this module stands alone: the linear layers inside the
    language model, outside any vision tower, whose last name part is wanted."""
    prefix = f"{language_model}." if language_model else ""
    chosen = [name for name in linear_layers if name.startswith(prefix) and name.split(".")[-1] in set(wanted)
              and not any(part.startswith("vision") or part == "visual" for part in name.split("."))]
    if not chosen:
        raise ValueError(f"LoRA targets {list(wanted)} name no linear layer of the language model "
                         f"({language_model or 'the model'})")
    return chosen


def load_config(source: Any):
    """A transformers config from a model directory, a config.json path, a config object or its dict."""
    import transformers

    if isinstance(source, transformers.PretrainedConfig):
        return source
    if isinstance(source, dict):
        fields = dict(source)
        return transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
    return transformers.AutoConfig.from_pretrained(source)


def model_class(transformers, config):
    """The class config.json names when transformers has it and it generates text (a Qwen3.5/3.6 checkpoint names its
    image-text class, vision tower included), else AutoModelForCausalLM: what train_lora loads."""
    for name in getattr(config, "architectures", None) or []:
        found = getattr(transformers, name, None)
        if found is not None and name.endswith(("ForCausalLM", "ForConditionalGeneration")):
            return found
    return transformers.AutoModelForCausalLM


def count_parameters(model_config_dir_or_dict: Any, lora_targets: Sequence[str], lora_rank: int) -> Dict[str, Any]:
    """The model's parameters, counted on its architecture built on the meta device (exact, no weights), the LoRA
    parameters r × (in + out) of every targeted linear layer, and the shapes the activation formulas need.
    `layerDetails` has one entry per decoder layer: its kind, parameters and LoRA (parameters, modules, and the sum of
    the targeted layers' input sizes, which sets what LoRA saves for backward)."""
    import torch
    import transformers

    config = load_config(model_config_dir_or_dict)
    cls = model_class(transformers, config)
    with torch.device("meta"):
        model = cls.from_config(config) if cls is transformers.AutoModelForCausalLM else cls(config)
    names = {id(module): name for name, module in model.named_modules()}
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else model
    language_model = names.get(id(decoder), "")
    linear = {name: module for name, module in model.named_modules() if isinstance(module, torch.nn.Linear)}
    targets = choose_lora_targets(list(linear), language_model, lora_targets)
    text = config.get_text_config()
    kinds = list(getattr(text, "layer_types", None) or ["full_attention"] * len(decoder.layers))
    prefix = f"{language_model}.layers." if language_model else "layers."
    details = []
    for index, layer in enumerate(decoder.layers):
        mine = [linear[name] for name in targets if name.startswith(f"{prefix}{index}.")]
        details.append({"kind": kinds[index], "parameters": sum(p.numel() for p in layer.parameters()),
                        "loraParameters": sum(lora_rank * (m.in_features + m.out_features) for m in mine),
                        "loraInputs": sum(m.in_features for m in mine), "loraModules": len(mine)})
    total = sum(p.numel() for p in model.parameters())
    head = model.get_output_embeddings()
    tied = head is not None and head.weight is decoder.get_input_embeddings().weight
    last = sum(p.numel() for p in getattr(decoder, "norm", torch.nn.Identity()).parameters())
    last += 0 if head is None or tied else head.weight.numel()
    decoder_parameters = sum(p.numel() for p in decoder.parameters())
    attention_heads = text.num_attention_heads
    by_name: Dict[str, int] = {}
    for name in targets:
        by_name[name.split(".")[-1]] = by_name.get(name.split(".")[-1], 0) + 1
    return {
        "modelClass": cls.__name__ if cls is not transformers.AutoModelForCausalLM else type(model).__name__,
        "modelType": config.model_type, "parameters": total,
        "languageModelParameters": decoder_parameters + (0 if head is None or tied else head.weight.numel()),
        "visionParameters": total - decoder_parameters - (0 if head is None or tied else head.weight.numel()),
        "loraParameters": sum(lora_rank * (linear[n].in_features + linear[n].out_features) for n in targets),
        "loraLayers": len(targets), "loraTargets": dict(sorted(by_name.items())), "loraRank": lora_rank,
        "hidden": text.hidden_size, "layers": len(decoder.layers), "intermediate": text.intermediate_size,
        "vocabulary": text.vocab_size, "tiedEmbeddings": tied,
        "linearAttentionLayers": kinds.count("linear_attention"),
        "fullAttentionLayers": len(kinds) - kinds.count("linear_attention"),
        "attentionHeads": attention_heads, "keyValueHeads": getattr(text, "num_key_value_heads", attention_heads),
        "headDim": getattr(text, "head_dim", None) or text.hidden_size // attention_heads,
        "gatedAttention": bool(getattr(text, "attn_output_gate", False)),
        "linearKeyHeads": getattr(text, "linear_num_key_heads", 0), "linearValueHeads":
            getattr(text, "linear_num_value_heads", 0), "linearKeyHeadDim": getattr(text, "linear_key_head_dim", 0),
        "linearValueHeadDim": getattr(text, "linear_value_head_dim", 0),
        "firstBlockParameters": total - sum(d["parameters"] for d in details) - last, "lastBlockParameters": last,
        "largestParameter": max(p.numel() for p in model.parameters()), "layerDetails": details,
    }


def layer_bytes_per_token(counts: Dict[str, Any], detail: Dict[str, Any], *, lora_bytes: int, lora_dropout: float,
                          dropout_mask_bytes: int, kernels: str) -> Dict[str, float]:
    """What one decoder layer's forward saves for its backward ("saved") and what its backward adds on top
    ("transient"), per token, in bytes, for 16-bit activations. The measured terms are the constants above: the layer
    without LoRA, then each LoRA module saves the copy of its input that lora_A multiplies (in the LoRA dtype: peft
    keeps LoRA in float32 and casts the input to it; FSDP2's bf16 mixed precision gathers LoRA in bf16) plus, with
    dropout, the dropout mask (1 byte on CUDA, whose dropout keeps a bool mask; 4 on CPU, where the test measures), and
    lora_A's r-wide output. Within a few % of the CPU measurement of layers of other sizes (test_memory_plan.py)."""
    h, i = counts["hidden"], counts["intermediate"]
    saved = SAVED_PER_HIDDEN * h + SAVED_PER_INTERMEDIATE * i
    if detail["kind"] == "linear_attention":
        value = counts["linearValueHeads"] * counts["linearValueHeadDim"]
        saved += LINEAR_KEY_PER_ELEMENT * counts["linearKeyHeads"] * counts["linearKeyHeadDim"]
        saved += (LINEAR_VALUE_PER_ELEMENT + GATED_DELTA_CORE_PER_VALUE_ELEMENT[kernels]) * value
    elif counts["gatedAttention"]:
        d = counts["headDim"]
        saved += d * (GATED_QUERY_PER_HEAD_ELEMENT * counts["attentionHeads"]
                      + ATTENTION_PER_HEAD_ELEMENT * counts["keyValueHeads"] + GATED_CONSTANT_PER_HEAD_DIM)
    else:
        saved += ATTENTION_PER_HEAD_ELEMENT * counts["headDim"] * (counts["attentionHeads"] + counts["keyValueHeads"])
    mask = dropout_mask_bytes if lora_dropout > 0 else 0
    saved += detail["loraInputs"] * (lora_bytes + mask) + detail["loraModules"] * counts["loraRank"] * lora_bytes
    transient = TRANSIENT_PER_INTERMEDIATE * i + TRANSIENT_PER_HIDDEN * h
    if detail["loraModules"]:
        transient += LORA_TRANSIENT_PER_HIDDEN * h * lora_bytes / 4
        if lora_dropout == 0:
            transient -= (TRANSIENT_PER_INTERMEDIATE - TRANSIENT_PER_INTERMEDIATE_LORA_NO_DROPOUT) * i
    return {"saved": saved, "transient": transient}


def loss_bytes(counts: Dict[str, Any], *, window_tokens: int, labelled_tokens: int, loss_chunk: Optional[int],
               dtype: str = "bfloat16") -> Dict[str, int]:
    """The loss's memory on the replica's last GPU: the logits (12 bytes each, measured: bf16 logits, their float32
    copy, the saved log-softmax and its float32 and bf16 gradients) of `loss_chunk` labelled positions at a time, or
    of all of them unchunked, plus the final norm's saved tensors over the window and the labelled positions' hidden
    states and their gradient. Chunked, only the last part grows with the labelled tokens."""
    labelled = min(labelled_tokens, window_tokens)
    logits = LOGIT_BYTES * (min(loss_chunk, labelled) if loss_chunk else labelled) * counts["vocabulary"]
    scale = DTYPE_BYTES[dtype] / 2
    hidden = int((FINAL_NORM_BYTES * window_tokens + LABELLED_HIDDEN_BYTES * labelled) * counts["hidden"] * scale)
    return {"logits": logits, "hidden": hidden, "total": logits + hidden}


def pipeline_split(counts: Dict[str, Any], gpus: int) -> Dict[str, Any]:
    """The decoder layers on each of a replica's GPUs and the GPU of the final norm and output head, as transformers'
    device_map "auto" places them: accelerate's balanced map fills the GPUs in order, each but the last up to total/g
    plus 1.25 × the largest layer or parameter (GPU 0 keeping room for that largest one), the embeddings and vision
    tower first. So with many GPUs the last ones may stay empty. Checked against accelerate 1.15's
    infer_auto_device_map for Qwen3.6-27B on 2, 3, 4, 6 and 8 GPUs (e.g. 32/32 and 8/16/16/16/8/0 layers)."""
    layers = [d["parameters"] for d in counts["layerDetails"]]
    if gpus <= 1:
        return {"layers": [list(range(len(layers)))], "head": 0}
    largest = max(max(layers), counts["largestParameter"])
    split: List[List[int]] = [[] for _ in range(gpus)]
    device, used = 0, counts["firstBlockParameters"]
    for index, size in enumerate(layers + [counts["lastBlockParameters"]]):
        budget = counts["parameters"] / gpus + 1.25 * largest - (largest if device == 0 else 0)
        if device < gpus - 1 and used + size > budget:
            device, used = device + 1, 0
        if index < len(layers):
            split[device].append(index)
        used += size
    return {"layers": split, "head": device}


def estimate_memory(counts: Dict[str, Any], *, window_tokens: int, labelled_tokens: int, dtype: str,
                    gradient_checkpointing: bool, loss_chunk: Optional[int], sharding: str, gpus_per_replica: int,
                    replicas: int, lora_dropout: float = 0.05, linear_attention_kernels: str = "torch",
                    dropout_mask_bytes: int = 1) -> Dict[str, Any]:
    """Bytes on the worst GPU, with its breakdown (see the module docstring for what each part counts; all are
    estimates, the parameter counts excepted). `total` = weights + lora + checkpoints + the larger of the layer
    working set and the loss + overhead; `activations` = checkpoints + working set; `loss` is the fullest GPU's (zero
    when the head is on another GPU of the replica: `replicaLoss` on GPU `lossGpu`). `perGpu` has every GPU of a DDP
    replica (FSDP2: one rank stands for all). Linear-attention kernels: "fla" or "torch" (transformers' fallback)."""
    if sharding not in ("ddp", "fsdp"):
        raise ValueError(f"sharding {sharding!r}: use ddp or fsdp")
    if sharding == "fsdp" and gpus_per_replica != 1:
        raise ValueError("fsdp shards the model over the processes, one GPU each: gpus_per_replica must be 1")
    size = DTYPE_BYTES[dtype]
    scale = size / 2  # the measured activation bytes are for 16-bit activations
    T, h = window_tokens, counts["hidden"]
    N = min(labelled_tokens, window_tokens)
    lora_bytes = size if sharding == "fsdp" else 4
    per_layer = [layer_bytes_per_token(counts, d, lora_bytes=lora_bytes, lora_dropout=lora_dropout,
                                       dropout_mask_bytes=dropout_mask_bytes, kernels=linear_attention_kernels)
                 for d in counts["layerDetails"]]
    loss = loss_bytes(counts, window_tokens=T, labelled_tokens=N, loss_chunk=loss_chunk, dtype=dtype)["total"]
    details = counts["layerDetails"]

    def one_gpu(layers: List[int], weights: float, lora: float, last: bool) -> Dict[str, float]:
        if gradient_checkpointing:
            kept = len(layers) * T * h * size
            working = max((per_layer[k]["saved"] + per_layer[k]["transient"] for k in layers), default=0) * T * scale
        else:
            kept = sum(per_layer[k]["saved"] for k in layers) * T * scale
            working = max((per_layer[k]["transient"] for k in layers), default=0) * T * scale
        gpu_loss = loss if last else 0
        peak = weights + lora + kept + max(working, gpu_loss)
        overhead = OVERHEAD_FIXED + OVERHEAD_FRACTION * peak
        return {"weights": weights, "lora": lora, "checkpoints": kept, "workingSet": working,
                "activations": kept + working, "loss": gpu_loss, "overhead": overhead, "total": peak + overhead}

    if sharding == "fsdp":
        biggest = max(d["parameters"] for d in details)
        weights = (counts["parameters"] / replicas + counts["firstBlockParameters"] + counts["lastBlockParameters"]
                   + 2 * biggest) * size
        lora = counts["loraParameters"] * 16 / replicas + 2 * max(d["loraParameters"] for d in details) * (size + 4)
        per_gpu = [one_gpu(list(range(len(details))), weights, lora, True)]
    else:
        split = pipeline_split(counts, gpus_per_replica)
        per_gpu = []
        for device, layers in enumerate(split["layers"]):
            params = sum(details[k]["parameters"] for k in layers)
            params += counts["firstBlockParameters"] if device == 0 else 0
            params += counts["lastBlockParameters"] if device == split["head"] else 0
            lora_params = sum(details[k]["loraParameters"] for k in layers)
            per_gpu.append(one_gpu(layers, params * size, lora_params * (16 + (4 if replicas > 1 else 0)),
                                   device == split["head"]))
    worst = max(range(len(per_gpu)), key=lambda k: per_gpu[k]["total"])
    kernels = {"fla": "flash-linear-attention's kernels", "torch": "transformers' PyTorch fallback (no fla)"}
    assumptions = [
        f"{dtype} weights; LoRA r {counts['loraRank']} in "
        f"{'bf16 (FSDP2 mixed precision)' if lora_bytes == 2 else 'float32'}, dropout {lora_dropout}",
        "activation coefficients measured on CPU (transformers 5.18, peft 0.21)",
        f"linear attention: {kernels[linear_attention_kernels]}" if counts["linearAttentionLayers"] else "",
        "attention through SDPA or flash attention (no T x T scores)",
        "the loss and a layer's backward never overlap: the larger counts",
        f"overhead: {OVERHEAD_FIXED / GIB:.1f} GiB CUDA context and buffers + {OVERHEAD_FRACTION:.0%} fragmentation",
        (f"ddp: the layers split over {gpus_per_replica} GPU(s) as device_map auto splits them"
         + ("; +4 B per LoRA parameter for DDP's gradient buckets" if replicas > 1 else "")) if sharding == "ddp"
        else "fsdp: 1/ranks of each weight, the gathered root (embeddings, head, vision) and 2 gathered layers",
    ]
    idle = sum(1 for g in per_gpu if g["weights"] == 0)
    if idle:
        assumptions.append(f"device_map auto leaves {idle} of the replica's {len(per_gpu)} GPUs without a layer")
    head = 0 if sharding == "fsdp" else split["head"]
    return {**{key: int(value) for key, value in per_gpu[worst].items()}, "gpu": worst, "idleGpus": idle,
            "replicaLoss": int(loss), "lossGpu": head,
            "perGpu": [int(g["total"]) for g in per_gpu], "assumptions": [a for a in assumptions if a]}


def gpu_memory_bytes(gib: Optional[float] = None) -> Optional[int]:
    """The memory one GPU may use: `gib` when given, else the smallest visible GPU's, else None (no GPU)."""
    if gib:
        return int(gib * GIB)
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
        return None
    return min(torch.cuda.get_device_properties(k).total_memory for k in range(torch.cuda.device_count()))


def detected_linear_attention_kernels() -> str:
    """"fla" where flash-linear-attention is importable (transformers then uses its kernels), else "torch"."""
    return "fla" if importlib.util.find_spec("fla") is not None else "torch"


def _setting(sharding: str, g: int, chunk: Optional[int], checkpointing: bool, base: Dict[str, Any]) -> str:
    launch = "{ sharding: fsdp }" if sharding == "fsdp" else f"{{ sharding: ddp, gpusPerReplica: {g} }}"
    text = f"rsi.trainer.launch: {launch}"
    hyper = []
    if chunk != base["lossChunk"]:
        hyper.append(f"lossChunkSize: {chunk}")
    if checkpointing != base["gradientCheckpointing"]:
        hyper.append(f"gradientCheckpointing: {str(checkpointing).lower()}")
    return text + (f"; rsi.hyperparameters: {{ {', '.join(hyper)} }}" if hyper else "")


def plan_fit(model_config: Any, *, lora_targets: Sequence[str], lora_rank: int, window_tokens: int,
             labelled_tokens: int, dtype: str, gradient_checkpointing: bool, loss_chunk: Optional[int], sharding: str,
             gpus_per_node: int, nodes: int, gpus_per_replica: Optional[int], gpu_memory_bytes: Optional[int],
             lora_dropout: float = 0.05, linear_attention_kernels: Optional[str] = None) -> Dict[str, Any]:
    """The estimate for the launch, whether it fits and every alternative on this hardware. `model_config` may also be
    what count_parameters returned. With gpus_per_replica None the launch is chosen: for ddp the fewest GPUs per
    replica (a divisor of the node's GPUs) whose estimate fits; fsdp always 1. Alternatives: each ddp g, fsdp, and
    the loss chunk of 512 or gradient checkpointing where the run has them off."""
    counts = model_config if isinstance(model_config, dict) and "layerDetails" in model_config else \
        count_parameters(model_config, lora_targets or DEFAULT_TARGETS, lora_rank)
    kernels = linear_attention_kernels or detected_linear_attention_kernels()
    per_node = max(gpus_per_node, 1)
    divisors = [g for g in range(1, per_node + 1) if per_node % g == 0]
    if gpus_per_replica is not None and (gpus_per_replica < 1 or per_node % gpus_per_replica):
        raise ValueError(f"gpusPerReplica {gpus_per_replica} does not divide the {per_node} GPUs of a node")
    base = {"lossChunk": loss_chunk, "gradientCheckpointing": gradient_checkpointing}

    def estimate(shard: str, g: int, chunk: Optional[int] = loss_chunk, checkpointing: bool = gradient_checkpointing,
                 tokens: int = window_tokens) -> Dict[str, Any]:
        return estimate_memory(counts, window_tokens=tokens, labelled_tokens=min(labelled_tokens, tokens), dtype=dtype,
                               gradient_checkpointing=checkpointing, loss_chunk=chunk, sharding=shard,
                               gpus_per_replica=g, replicas=nodes * per_node // g, lora_dropout=lora_dropout,
                               linear_attention_kernels=kernels)

    def fits(total: int) -> Optional[bool]:
        return None if gpu_memory_bytes is None else total <= gpu_memory_bytes

    options = [("ddp", g, loss_chunk, gradient_checkpointing) for g in divisors]
    options.append(("fsdp", 1, loss_chunk, gradient_checkpointing))
    for shard, g in [("ddp", g) for g in divisors] + [("fsdp", 1)]:
        if loss_chunk is None:
            options.append((shard, g, 512, gradient_checkpointing))
        if not gradient_checkpointing:
            options.append((shard, g, loss_chunk or 512, True))
    alternatives = []
    for shard, g, chunk, checkpointing in options:
        total = estimate(shard, g, chunk, checkpointing)
        alternatives.append({"sharding": shard, "gpusPerReplica": g, "replicas": nodes * per_node // g,
                             "lossChunk": chunk, "gradientCheckpointing": checkpointing, "total": total["total"],
                             "idleGpus": total["idleGpus"], "fits": fits(total["total"]),
                             "settings": _setting(shard, g, chunk, checkpointing, base)})
    same = [a for a in alternatives if a["sharding"] == sharding and a["lossChunk"] == loss_chunk
            and a["gradientCheckpointing"] == gradient_checkpointing]
    if sharding == "fsdp":
        chosen = 1 if gpus_per_replica in (None, 1) else gpus_per_replica
    elif gpus_per_replica is not None:
        chosen = gpus_per_replica
    elif gpu_memory_bytes is None:
        chosen = 1
    else:
        fitting = [a["gpusPerReplica"] for a in same if a["fits"]]
        chosen = fitting[0] if fitting else min(same, key=lambda a: a["total"])["gpusPerReplica"]
    result = estimate(sharding, chosen)
    plan = {"estimate": result, "gpuMemory": gpu_memory_bytes, "fits": fits(result["total"]),
            "launch": {"sharding": sharding, "gpusPerReplica": chosen, "replicas": nodes * per_node // chosen,
                       "processesPerNode": per_node if sharding == "fsdp" else per_node // chosen},
            "alternatives": alternatives, "counts": {k: v for k, v in counts.items() if k != "layerDetails"},
            "inputs": {"windowTokens": window_tokens, "labelledTokens": labelled_tokens, "dtype": dtype,
                       "gradientCheckpointing": gradient_checkpointing, "lossChunk": loss_chunk, "nodes": nodes,
                       "gpusPerNode": per_node, "loraDropout": lora_dropout, "linearAttentionKernels": kernels}}
    if kernels == "torch" and counts["linearAttentionLayers"]:
        plan["withFla"] = estimate_memory(counts, window_tokens=window_tokens, labelled_tokens=labelled_tokens,
                                          dtype=dtype, gradient_checkpointing=gradient_checkpointing,
                                          loss_chunk=loss_chunk, sharding=sharding, gpus_per_replica=chosen,
                                          replicas=nodes * per_node // chosen, lora_dropout=lora_dropout,
                                          linear_attention_kernels="fla")["total"]
    if plan["fits"] is False:
        # The longest window this launch holds, or, when no setting fits, the cheapest alternative.
        best = next(a for a in same if a["gpusPerReplica"] == chosen)
        if not any(a["fits"] for a in alternatives):
            best = min(alternatives, key=lambda a: a["total"])
        low, high = 0, window_tokens
        while high - low > 256:
            middle = (low + high) // 2
            if fits(estimate(best["sharding"], best["gpusPerReplica"], best["lossChunk"],
                             best["gradientCheckpointing"], middle)["total"]):
                low = middle
            else:
                high = middle
        plan["shorterWindows"] = {"windowTokens": low // 256 * 256, "settings": best["settings"]}
    return plan


def _gib(value: Optional[float]) -> str:
    """Bytes in GiB, the unit of --gpu-memory-gib."""
    return "?" if value is None else f"{value / GIB:.1f} GiB"


def format_table(plan: Dict[str, Any]) -> str:
    """The plan as text: the launch's breakdown on its worst GPU, then every alternative."""
    e, launch, counts, inputs = plan["estimate"], plan["launch"], plan["counts"], plan["inputs"]
    memory = plan["gpuMemory"]
    verdict = {True: "fits", False: "does NOT fit", None: "GPU memory unknown"}[plan["fits"]]
    kernels = f", linear attention {inputs['linearAttentionKernels']}" if counts["linearAttentionLayers"] else ""
    lines = [f"{counts['modelClass']}: {counts['parameters'] / 1e9:.2f} B parameters, LoRA r {counts['loraRank']} "
             f"{counts['loraParameters'] / 1e6:.1f} M on {counts['loraLayers']} layers; windows of "
             f"{inputs['windowTokens']:,} tokens ({inputs['labelledTokens']:,} labelled), {inputs['dtype']}, "
             f"checkpointing {'on' if inputs['gradientCheckpointing'] else 'off'}, loss chunk "
             f"{inputs['lossChunk'] or 'none'}{kernels}",
             f"launch: {launch['sharding']}, {launch['gpusPerReplica']} GPU(s) per replica x {launch['replicas']} "
             f"replicas ({launch['processesPerNode']} processes per node); per GPU of a replica: "
             + ", ".join(_gib(total) for total in e["perGpu"]) + f"; the fullest, GPU {e['gpu']}:"]
    for label, value, note in (
            ("weights", e["weights"], ""), ("lora", e["lora"], "parameters, gradients, AdamW"),
            ("checkpoints", e["checkpoints"], "layer inputs kept for backward"),
            ("working set", e["workingSet"], "one layer's recompute and backward"),
            ("loss", e["replicaLoss"], f"on GPU {e['lossGpu']}, before the layers' backward: the larger of it and "
                                       "the working set counts"),
            ("overhead", e["overhead"], ""), ("total", e["total"], f"of {_gib(memory)}: {verdict}")):
        lines.append(f"  {label:<13}{_gib(value):>11}   {note}".rstrip())
    lines.append("alternatives (total on the fullest GPU):")
    for a in plan["alternatives"]:
        mark = {True: "fits", False: "no", None: "?"}[a["fits"]]
        idle = f"  ({a['idleGpus']} GPU(s) of each replica idle)" if a["idleGpus"] else ""
        lines.append(f"  {a['sharding']:<5} g={a['gpusPerReplica']:<2} replicas={a['replicas']:<3} "
                     f"{_gib(a['total']):>11}  {mark:<4}  {a['settings']}{idle}")
    if "withFla" in plan:
        lines.append(f"with flash-linear-attention installed (its kernels for the linear attention): "
                     f"{_gib(plan['withFla'])} per GPU")
    if "shorterWindows" in plan:
        lines.append(f"windows of at most {plan['shorterWindows']['windowTokens']:,} tokens would fit with "
                     f"{plan['shorterWindows']['settings']}")
    return "\n".join(lines)


def refusal_message(plan: Dict[str, Any]) -> str:
    """Why the run is refused, and what to change: the settings that fit on this hardware (most replicas first), and
    the longest windows that would."""
    e, launch, inputs = plan["estimate"], plan["launch"], plan["inputs"]
    text = (f"the training would not fit in GPU memory: about {_gib(e['total'])} on the fullest GPU (weights "
            f"{_gib(e['weights'])}, LoRA and AdamW {_gib(e['lora'])}, activations {_gib(e['activations'])}, loss "
            f"{_gib(e['replicaLoss'])}) against {_gib(plan['gpuMemory'])}, with {launch['sharding']}, "
            f"{launch['gpusPerReplica']} GPU(s) per replica x {launch['replicas']} replicas and windows of "
            f"{inputs['windowTokens']:,} tokens (an estimate: memory_plan.py). ")
    if "withFla" in plan:
        text += (f"flash-linear-attention is not installed: with it (pip install flash-linear-attention) this launch "
                 f"would need about {_gib(plan['withFla'])}. ")
    fitting = sorted((a for a in plan["alternatives"] if a["fits"]), key=lambda a: (-a["replicas"], a["total"]))
    shorter = plan.get("shorterWindows", {}).get("windowTokens", 0)
    if fitting:
        text += "Settings that fit: " + "; ".join(f"{a['settings']} (about {_gib(a['total'])})" for a in fitting[:3])
        if shorter:
            text += f". Or keep this launch with windows of at most {shorter:,} tokens (distill.windowTokens)"
        return text + "."
    text += f"No setting fits on {inputs['nodes']} x {inputs['gpusPerNode']} GPUs of this size: "
    if shorter:
        text += (f"shorter windows would (distill.windowTokens at most {shorter:,}, with "
                 f"{plan['shorterWindows']['settings']}), or ")
    return text + "more GPUs per replica (more GPUs a node), or GPUs with more memory."


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Per-GPU memory estimate of a LoRA training run.")
    parser.add_argument("--model-config", required=True, help="config.json or the model's directory")
    parser.add_argument("--window-tokens", type=int, default=49152)
    parser.add_argument("--labelled-tokens", type=int, default=20000)
    parser.add_argument("--gpus", type=int, default=8, help="GPUs per node")
    parser.add_argument("--nodes", type=int, default=1)
    parser.add_argument("--gpu-memory-gib", type=float, default=80.0)
    parser.add_argument("--sharding", choices=["ddp", "fsdp"], default="ddp")
    parser.add_argument("--gpus-per-replica", type=int, default=None)
    parser.add_argument("--lora-rank", type=int, default=64)
    parser.add_argument("--lora-targets", nargs="+", default=DEFAULT_TARGETS)
    parser.add_argument("--lora-dropout", type=float, default=0.05)
    parser.add_argument("--loss-chunk", type=int, default=512)
    parser.add_argument("--no-loss-chunk", action="store_true", help="the whole labelled set's logits at once")
    parser.add_argument("--no-gradient-checkpointing", action="store_true")
    parser.add_argument("--dtype", choices=sorted(DTYPE_BYTES), default="bfloat16")
    parser.add_argument("--linear-attention-kernels", choices=["fla", "torch"], default=None,
                        help="default: fla when flash-linear-attention is importable here, else torch")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    plan = plan_fit(args.model_config, lora_targets=args.lora_targets, lora_rank=args.lora_rank,
                    window_tokens=args.window_tokens, labelled_tokens=args.labelled_tokens, dtype=args.dtype,
                    gradient_checkpointing=not args.no_gradient_checkpointing,
                    loss_chunk=None if args.no_loss_chunk else args.loss_chunk, sharding=args.sharding,
                    gpus_per_node=args.gpus, nodes=args.nodes, gpus_per_replica=args.gpus_per_replica,
                    gpu_memory_bytes=gpu_memory_bytes(args.gpu_memory_gib),
                    lora_dropout=args.lora_dropout, linear_attention_kernels=args.linear_attention_kernels)
    print(json.dumps(plan, indent=2) if args.json else format_table(plan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
