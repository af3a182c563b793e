#!/usr/bin/env python3
"""How much GPU memory a LoRA training run needs, per GPU, before anything is loaded: an estimate.

    python memory_plan.py --model-config <config.json or model dir> [--window-tokens 49152] [--labelled-tokens 20000]
        [--gpus 8] [--nodes 1] [--gpu-memory-gib 80 | --gpu-memory-bytes N] [--sharding ddp|fsdp]
        [--gpus-per-replica g] [--lora-rank 64] [--lora-dropout 0.05] [--loss-chunk 512 | --no-loss-chunk]
        [--dtype bfloat16] [--json]

train_lora.py calls `plan_fit` before it loads a single weight, refuses a launch the estimate says cannot fit
(`refusal_message` names settings that would) and logs `format_table`. The parameters are counted exactly: the model's
class is built from config.json on the meta device (no weights, no download). The activations are not: they come from
formulas whose coefficients were measured, on CPU, with this very stack (torch 2.13, transformers 5.18, peft 0.21), by
recording the bytes alive while one decoder layer runs as training_loop.py runs it. For a bf16 or fp16 model that is:
the forward under torch.autocast in the model's dtype, LoRA's A and B in float32 (AdamW's master weights) applied to
the layer's own 16-bit input (`cast_input_dtype_enabled` False on every LoRA layer: no float32 copy of the input), and
non-reentrant gradient checkpointing. A float32 model runs without autocast, everything in float32. The layer was
measured at two sequence lengths (the slope is the per-token cost) and at many sizes, fitted by the terms of
ACTIVATIONS, and the fit checked against layers at the real sizes of Qwen3.6-27B (test/train/python/test_memory_plan.py
re-measures small layers the same way). GPU memory itself was not measured; where CUDA differs from the CPU
measurement it is said where the number is used.

What a GPU holds, and why it is counted so (T window tokens, N labelled, h hidden size, i MLP size, V vocabulary):
- weights: every parameter in the model's dtype. DDP splits a replica's model over its g GPUs layer by layer as
  transformers' device_map "auto" does (`pipeline_split`: GPU 0 first, each up to total/g plus a margin, so GPU 0 holds
  the most and with many GPUs the last may hold nothing); FSDP2 holds 1/ranks of every weight, the unsharded root
  group (embeddings, output head, vision tower: FSDP2 keeps the root gathered from forward to the end of backward) and
  two gathered decoder layers (the current and the prefetched one).
- lora: the LoRA parameters in float32 (peft's default, kept so as AdamW's master weights), their gradients and
  AdamW's two moments: 16 bytes a parameter, plus DDP's gradient buckets (4) when there is more than one replica;
  FSDP2 shards all of it over the ranks and gathers the LoRA weights in the model's dtype with the frozen ones.
- checkpoints: with gradient checkpointing each decoder layer keeps only its input, T x h in the model's dtype.
- working set: one layer recomputed and back-propagated at a time; its peak, reached at the end of the recompute,
  holds what the layer saves for backward, the incoming gradient and the recompute's last temporaries:
  `layer_bytes_per_token` (see its docstring). Without checkpointing every layer's saved tensors stay and the
  backward adds only its temporaries.
- loss: the final norm's saved tensors (6 bytes per T x h element), the labelled positions' hidden states and their
  gradient (4 bytes per N x h), and the logits: 12 bytes per logit, measured (bf16 logits, their float32 copy, the
  saved log-softmax, its float32 gradient and the bf16 one), min(chunk, N) x V logits when chunked, N x V when not.
  The loss runs at the end of the forward, before any layer's backward, so a GPU's peak holds the larger of the working
  set and the forward's end: the loss plus, under DDP with autocast, the bf16 copies autocast caches of every LoRA
  weight the GPU holds (2 bytes a LoRA parameter, freed when the forward's autocast ends).
- overhead: CUDA context, cuBLAS and NCCL buffers and allocator fragmentation: a fixed 1.5 GiB plus 5 % of the rest.
  Not measured: a margin.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from typing import Any, Dict, List, Optional, Sequence

from lora_targets import choose_lora_targets as _choose_lora_targets
from window_data import DataError

DEFAULT_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "in_proj_qkv",
                   "in_proj_z", "out_proj"]
GIB = 1024 ** 3
# What torch reports as an "80 GB" H100's total memory (torch.cuda.get_device_properties(0).total_memory): 79.65 GiB,
# not 80. docs/memory-plan-qwen3.6-27b.md uses it for "80 GB".
H100_80GB_BYTES = 85_520_809_984
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
OVERHEAD_FIXED = int(1.5 * GIB)
OVERHEAD_FRACTION = 0.05
LOGIT_BYTES = 12          # per logit of the cross-entropy, forward and backward (measured)
FINAL_NORM_BYTES = 6      # per T x h element: the norm's float32 input copy and its output
LABELLED_HIDDEN_BYTES = 4  # per N x h element: the selected hidden states and their gradient
# Output projections: a LoRA layer of one of these names has an input of its own; the other targeted layers of one
# module (q/k/v, gate/up, in_proj_qkv/in_proj_z) share theirs, which matters when there is no dropout.
OUTPUT_PROJECTIONS = ("o_proj", "down_proj", "out_proj")

# Bytes per token that one decoder layer keeps for its backward, by the path training_loop.py takes for the model's
# dtype: "autocast" (bf16 or fp16 weights, forward under torch.autocast, LoRA float32 applied to the 16-bit input) or
# "float32". Measured on CPU (torch 2.13, transformers 5.18, peft 0.21), LoRA r 64 on the default targets, at 2
# lengths (the slope) and 7 to 9 sizes a kind, which these terms fit within 0.05 %, then checked, also within 0.05 %,
# against layers at the real sizes of Qwen3.6-27B (h 5120, i 17408), of a Qwen3.5 at h 4096, i 12288 and of Qwen3-8B,
# with and without dropout, in bf16 and float32. Per element of:
#   hidden/intermediate: h and i (the norms' float32 copies and the residual stream; the MLP's gate, up, product);
#   query/keyValue/head: attention's heads x head_dim, kv_heads x head_dim, and per head (log-sum-exp, norm scales);
#     "gated" is Qwen3.5/3.6's attention (q_proj also yields an output gate), "plain" Qwen3's;
#   linearKey: Gated DeltaNet's key heads x key_dim (its conv and split);
#   core: the gated delta rule, per element of value heads x value_dim ("value"), of value heads x key_dim ("repeated":
#     q and k repeated to the value heads), per value head ("valueHead": per-chunk 64 x 64 matrices) and per
#     value_heads x key_dim x value_dim / 64 ("state": the recurrent state of every 64-token chunk). "torch" is
#     transformers' PyTorch fallback, measured; "fla" is flash-linear-attention 0.5.2's chunk kernel, which cannot run
#     on CPU: measured with a stand-in that allocates, keeps and frees exactly the tensors fla's Python code does
#     (fla/ops/gated_delta_rule/chunk.py and the functions it calls, read at v0.5.2), inside the real layer;
#   activation: bytes of an activation element (LoRA's dropout output or shared input, lora_A's r-wide output);
#   cpuMask: the dropout mask as measured on CPU (a noise tensor in the activations' dtype; CUDA keeps a 1-byte bool);
#   recompute: with checkpointing, what the working set holds beyond the saved tensors at its peak, per h, per i and
#     per LoRA rank: with LoRA dropout the peak is the end of the recompute (the incoming gradient and the MLP's last
#     temporaries), without it the start of the MLP's backward (its gradients);
#   backward: without checkpointing, what a layer's backward adds to its saved tensors at its peak, per h, i and rank.
ACTIVATIONS: Dict[str, Dict[str, Any]] = {
    "autocast": {
        "hidden": 8, "intermediate": 6,
        "gated": {"query": 12, "keyValue": 8, "head": 12, "keyValueHead": 0},
        "plain": {"query": 8, "keyValue": 8, "head": 8, "keyValueHead": 4},
        "linearKey": 8,
        "core": {"torch": {"value": 30, "repeated": 38, "valueHead": 924, "state": 8},
                 "fla": {"value": 20, "repeated": 4, "valueHead": 150, "state": 0}},
        "activation": 2, "cpuMask": 2,
        # (per h, per i, per LoRA rank)
        "recompute": {"dropout": (10, 2, 0), "noDropout": (2, 4, -2)},
        "backward": {"dropout": (2, 2, 0), "noDropout": (2, 4, -2)},
    },
    "float32": {
        "hidden": 4, "intermediate": 12,
        "gated": {"query": 24, "keyValue": 12, "head": 12, "keyValueHead": 0},
        "plain": {"query": 12, "keyValue": 12, "head": 8, "keyValueHead": 4},
        "linearKey": 16,
        "core": {"torch": {"value": 36, "repeated": 48, "valueHead": 1314, "state": 4},
                 "fla": {"value": 28, "repeated": 8, "valueHead": 280, "state": 0}},
        "activation": 4, "cpuMask": 4,
        "recompute": {"dropout": (16, 4, 0), "noDropout": (4, 8, -4)},
        "backward": {"dropout": (4, 4, 0), "noDropout": (4, 8, -4)},
    },
}


def precision(dtype: str) -> str:
    """The path training_loop.py takes for a model of this dtype: "autocast" for bf16 and fp16, else "float32"."""
    return "autocast" if DTYPE_BYTES[dtype] == 2 else "float32"


def choose_lora_targets(linear_layers: Sequence[str], language_model: str, wanted: Sequence[str]) -> List[str]:
    """train_lora's rule (lora_targets.choose_lora_targets), with a ValueError instead of its DataError when nothing
    matches: what callers of this module (and train_lora's planning step) catch."""
    try:
        return _choose_lora_targets(linear_layers, language_model, wanted)
    except DataError as error:
        raise ValueError(str(error)) from error


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
    `layerDetails` has one entry per decoder layer: its kind, parameters and LoRA (parameters, modules, the sum of
    the targeted layers' input sizes, which sets what LoRA saves for backward with dropout, and that of their distinct
    inputs, which sets it without: q/k/v, gate/up and in_proj_qkv/in_proj_z read one tensor each)."""
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
    attention_heads = text.num_attention_heads
    head_dim = getattr(text, "head_dim", None) or text.hidden_size // attention_heads
    # Qwen3.5/3.6's attention gates its output: q_proj also yields the gate (transformers has no flag for it).
    queries = [module.out_features for name, module in linear.items() if name.endswith("self_attn.q_proj")]
    gated = bool(getattr(text, "attn_output_gate", False) or (queries and queries[0] == 2 * attention_heads * head_dim))
    details = []
    for index, layer in enumerate(decoder.layers):
        names = [name for name in targets if name.startswith(f"{prefix}{index}.")]
        mine = [linear[name] for name in names]
        # Without dropout lora_A reads the layer's own input: one tensor for the layers of a module that share it, and
        # none for an ungated attention's o_proj, whose input is the attention output SDPA keeps anyway.
        inputs = {}
        for name in names:
            short, size = name.split(".")[-1], linear[name].in_features
            key = name if short in OUTPUT_PROJECTIONS else (name.rsplit(".", 1)[0], size)
            inputs[key] = 0 if short == "o_proj" and not gated else size
        details.append({"kind": kinds[index], "parameters": sum(p.numel() for p in layer.parameters()),
                        "loraParameters": sum(lora_rank * (m.in_features + m.out_features) for m in mine),
                        "loraInputs": sum(m.in_features for m in mine), "loraModules": len(mine),
                        "loraDistinctInputs": sum(inputs.values())})
    total = sum(p.numel() for p in model.parameters())
    head = model.get_output_embeddings()
    tied = head is not None and head.weight is decoder.get_input_embeddings().weight
    last = sum(p.numel() for p in getattr(decoder, "norm", torch.nn.Identity()).parameters())
    last += 0 if head is None or tied else head.weight.numel()
    decoder_parameters = sum(p.numel() for p in decoder.parameters())
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
        "headDim": head_dim, "gatedAttention": gated,
        "linearKeyHeads": getattr(text, "linear_num_key_heads", 0), "linearValueHeads":
            getattr(text, "linear_num_value_heads", 0), "linearKeyHeadDim": getattr(text, "linear_key_head_dim", 0),
        "linearValueHeadDim": getattr(text, "linear_value_head_dim", 0),
        "firstBlockParameters": total - sum(d["parameters"] for d in details) - last, "lastBlockParameters": last,
        "largestParameter": max(p.numel() for p in model.parameters()), "layerDetails": details,
    }


def layer_bytes_per_token(counts: Dict[str, Any], detail: Dict[str, Any], *, dtype: str = "bfloat16",
                          lora_dropout: float = 0.05, dropout_mask_bytes: int = 1, kernels: str = "torch"
                          ) -> Dict[str, float]:
    """Per token, in bytes, for one decoder layer on training_loop.py's path for `dtype` (see ACTIVATIONS): "saved",
    what its forward keeps for backward; "working", the peak of its recompute and backward under gradient
    checkpointing (saved, the incoming gradient and the recompute's last temporaries); "transient", what its backward
    adds to the saved tensors without checkpointing. LoRA adds, per targeted layer, lora_A's r-wide output and, with
    dropout, the dropout's output and mask over the layer's input (`dropout_mask_bytes`: 1 on CUDA, a bool; the CPU
    measurement has a noise tensor of the activations' dtype); without dropout, lora_A's input is the layer's own input,
    one per distinct input. Measured sums, see ACTIVATIONS; test_memory_plan.py checks them on CPU."""
    c = ACTIVATIONS[precision(dtype)]
    h, i = counts["hidden"], counts["intermediate"]
    saved = c["hidden"] * h + c["intermediate"] * i
    if detail["kind"] == "linear_attention":
        core = c["core"][kernels]
        key_dim, value_dim = counts["linearKeyHeadDim"], counts["linearValueHeadDim"]
        value_heads = counts["linearValueHeads"]
        saved += c["linearKey"] * counts["linearKeyHeads"] * key_dim
        saved += (core["value"] * value_heads * value_dim + core["repeated"] * value_heads * key_dim
                  + core["valueHead"] * value_heads + core["state"] * value_heads * key_dim * value_dim / 64)
    else:
        attention = c["gated" if counts["gatedAttention"] else "plain"]
        heads, kv_heads, d = counts["attentionHeads"], counts["keyValueHeads"], counts["headDim"]
        saved += (attention["query"] * heads * d + attention["keyValue"] * kv_heads * d
                  + attention["head"] * heads + attention["keyValueHead"] * kv_heads)
    act = c["activation"]
    if lora_dropout > 0:
        saved += detail["loraInputs"] * (act + dropout_mask_bytes)
    else:
        saved += detail["loraDistinctInputs"] * act
    saved += detail["loraModules"] * counts["loraRank"] * act
    which = "dropout" if lora_dropout > 0 else "noDropout"
    r = counts["loraRank"] if detail["loraModules"] else 0
    per_h, per_i, per_r = c["recompute"][which]
    back_h, back_i, back_r = c["backward"][which]
    return {"saved": saved, "working": saved + per_h * h + per_i * i + per_r * r,
            "transient": back_h * h + back_i * i + back_r * r}


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
    working set and the forward's end (the loss and autocast's cached LoRA copies) + overhead; `activations` =
    checkpoints + working set; `loss` is the fullest GPU's (zero when the head is on another GPU of the replica:
    `replicaLoss` on GPU `lossGpu`). `perGpu` has every GPU of a DDP replica (FSDP2: one rank stands for all).
    Linear-attention kernels: "fla" or "torch" (transformers' fallback). `dropout_mask_bytes`: 1 on CUDA."""
    if sharding not in ("ddp", "fsdp"):
        raise ValueError(f"sharding {sharding!r}: use ddp or fsdp")
    if sharding == "fsdp" and gpus_per_replica != 1:
        raise ValueError("fsdp shards the model over the processes, one GPU each: gpus_per_replica must be 1")
    size = DTYPE_BYTES[dtype]
    path = precision(dtype)
    T, h = window_tokens, counts["hidden"]
    N = min(labelled_tokens, window_tokens)
    per_layer = [layer_bytes_per_token(counts, d, dtype=dtype, lora_dropout=lora_dropout,
                                       dropout_mask_bytes=dropout_mask_bytes, kernels=linear_attention_kernels)
                 for d in counts["layerDetails"]]
    loss = loss_bytes(counts, window_tokens=T, labelled_tokens=N, loss_chunk=loss_chunk, dtype=dtype)["total"]
    details = counts["layerDetails"]
    # Autocast casts each float32 LoRA weight to the model's dtype once per forward and keeps the copy until the
    # forward's autocast ends, after the loss. FSDP2 gathers LoRA in the model's dtype already: nothing to cast.
    cache_bytes = DTYPE_BYTES[dtype] if path == "autocast" and sharding == "ddp" else 0

    def one_gpu(layers: List[int], weights: float, lora: float, lora_parameters: float, last: bool
                ) -> Dict[str, float]:
        if gradient_checkpointing:
            kept = len(layers) * T * h * size
            working = max((per_layer[k]["working"] for k in layers), default=0) * T
        else:
            kept = sum(per_layer[k]["saved"] for k in layers) * T
            working = max((per_layer[k]["transient"] for k in layers), default=0) * T
        gpu_loss = loss if last else 0
        forward_end = gpu_loss + lora_parameters * cache_bytes
        peak = weights + lora + kept + max(working, forward_end)
        overhead = OVERHEAD_FIXED + OVERHEAD_FRACTION * peak
        return {"weights": weights, "lora": lora, "checkpoints": kept, "workingSet": working,
                "activations": kept + working, "loss": gpu_loss, "overhead": overhead, "total": peak + overhead}

    if sharding == "fsdp":
        biggest = max(d["parameters"] for d in details)
        weights = (counts["parameters"] / replicas + counts["firstBlockParameters"] + counts["lastBlockParameters"]
                   + 2 * biggest) * size
        lora = counts["loraParameters"] * 16 / replicas + 2 * max(d["loraParameters"] for d in details) * (size + 4)
        per_gpu = [one_gpu(list(range(len(details))), weights, lora, 0, True)]
    else:
        split = pipeline_split(counts, gpus_per_replica)
        per_gpu = []
        for device, layers in enumerate(split["layers"]):
            params = sum(details[k]["parameters"] for k in layers)
            params += counts["firstBlockParameters"] if device == 0 else 0
            params += counts["lastBlockParameters"] if device == split["head"] else 0
            lora_params = sum(details[k]["loraParameters"] for k in layers)
            per_gpu.append(one_gpu(layers, params * size, lora_params * (16 + (4 if replicas > 1 else 0)),
                                   lora_params, device == split["head"]))
    worst = max(range(len(per_gpu)), key=lambda k: per_gpu[k]["total"])
    kernels = {"fla": "flash-linear-attention's kernels", "torch": "transformers' PyTorch fallback (no fla)"}
    if path == "autocast":
        lora_text = (f"LoRA r {counts['loraRank']} float32 master weights, applied in {dtype} under autocast "
                     f"({'gathered in ' + dtype + ' by FSDP2' if sharding == 'fsdp' else 'no float32 input copies'})")
    else:
        lora_text = f"LoRA r {counts['loraRank']} in float32, no autocast"
    assumptions = [
        f"{dtype} weights; {lora_text}; dropout {lora_dropout}",
        "activation coefficients measured on CPU (torch 2.13, transformers 5.18, peft 0.21), GPU memory not measured",
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
    parser.add_argument("--gpu-memory-bytes", type=int, default=None,
                        help=f"instead of --gpu-memory-gib; an H100 80GB has {H100_80GB_BYTES}")
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
                    gpu_memory_bytes=args.gpu_memory_bytes or gpu_memory_bytes(args.gpu_memory_gib),
                    lora_dropout=args.lora_dropout, linear_attention_kernels=args.linear_attention_kernels)
    print(json.dumps(plan, indent=2) if args.json else format_table(plan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
