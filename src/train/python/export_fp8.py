"""Exports a merged BF16 generation as a block-wise FP8 checkpoint, in the layout of Qwen's own FP8 checkpoints, so
that vLLM serves a trained generation with the numerics and memory of the FP8 parent it is compared with.

    python export_fp8.py export --src <merged dir> --out <dir> [--like <an FP8 checkpoint>] [--block 128]
                                [--probe <the trainer's probe.json>]
    python export_fp8.py compare --out <an exported dir> --like <an FP8 checkpoint>

Which weights become FP8:
- with --like (recommended when you serve the parent from Qwen's FP8 checkpoint): exactly those that are float8 there
  (a weight with a `<name>_scale_inv` beside it), with the scale dtype and the `quantization_config` of that
  checkpoint; every other tensor is copied from --src. Afterwards the result is compared with it tensor by tensor
  (names, dtypes, shapes) and the export fails on any difference.
- without it, by rule: every matrix `.weight` of the language model's decoder layers, except the MoE router
  (`mlp.gate`), `shared_expert_gate` and the linear-attention layers' small `in_proj_a`/`in_proj_b` projections;
  embeddings, `lm_head`, norms, biases, convolutions, the vision tower and the multi-token-prediction head stay BF16.

Both print a JSON report; export also writes it into <out>/fp8_export.json, last, so that its presence means the
export is whole: tensors quantised and kept, and the error figures of the quantised weights (largest |error| over
e4m3's rounding bound, which must be ≤ 1, and the relative Frobenius error). With --probe, the exported model is
loaded (transformers dequantises it where it has no FP8 kernels) and scores the deployment check's probe: <out>/probe.json
is what the server serving this folder should answer.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
from typing import Dict, List, Optional, Tuple

import torch
from safetensors import safe_open
from safetensors.torch import save_file

import fp8_blocks

INDEX = "model.safetensors.index.json"
SINGLE = "model.safetensors"
SCALE_SUFFIX = "_scale_inv"
REPORT = "fp8_export.json"
KEPT_BY_RULE = re.compile(
    r"(^|\.)(embed_tokens|lm_head|visual|vision_tower|mtp)(\.|$)"
    r"|norm[^.]*\.weight$"
    r"|\.mlp\.gate\.weight$|shared_expert_gate\.weight$"
    r"|\.in_proj_[ab]\.weight$"
)
DECODER_LAYER = re.compile(r"(^|\.)layers\.\d+\.")


class ExportError(Exception):
    pass


def shard_map(directory: str) -> Dict[str, str]:
    """Tensor name -> the safetensors file of `directory` that holds it."""
    index = os.path.join(directory, INDEX)
    if os.path.isfile(index):
        with open(index) as handle:
            return dict(json.load(handle)["weight_map"])
    single = os.path.join(directory, SINGLE)
    if not os.path.isfile(single):
        raise ExportError(f"{directory}: neither {INDEX} nor {SINGLE}; is this a saved checkpoint?")
    with safe_open(single, framework="pt") as handle:
        return {name: SINGLE for name in handle.keys()}


def layout(directory: str) -> Dict[str, Tuple[str, Tuple[int, ...]]]:
    """Tensor name -> (safetensors dtype, shape), read from the headers without loading a tensor."""
    by_file: Dict[str, List[str]] = {}
    for name, file in shard_map(directory).items():
        by_file.setdefault(file, []).append(name)
    found = {}
    for file, names in by_file.items():
        with safe_open(os.path.join(directory, file), framework="pt") as handle:
            for name in names:
                piece = handle.get_slice(name)
                found[name] = (piece.get_dtype(), tuple(piece.get_shape()))
    return found


def read_config(directory: str) -> dict:
    with open(os.path.join(directory, "config.json")) as handle:
        return json.load(handle)


def quantised_by_rule(name: str, tensor: torch.Tensor) -> bool:
    return (tensor.dim() == 2 and name.endswith(".weight") and tensor.is_floating_point()
            and DECODER_LAYER.search(name) is not None and KEPT_BY_RULE.search(name) is None)


def module_of(weight_name: str) -> str:
    return weight_name[: -len(".weight")] if weight_name.endswith(".weight") else weight_name


def rule_config(kept_matrices: List[str], block: int) -> dict:
    """Qwen's FP8 `quantization_config`, listing every matrix kept in BF16 so no loader converts it."""
    return {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
            "weight_block_size": [block, block], "modules_to_not_convert": sorted(kept_matrices)}


def scale_dtype_of(like_layout: Dict[str, Tuple[str, Tuple[int, ...]]]) -> torch.dtype:
    names = {"BF16": torch.bfloat16, "F32": torch.float32, "F16": torch.float16}
    dtypes = {dtype for name, (dtype, _) in like_layout.items() if name.endswith(SCALE_SUFFIX)}
    if len(dtypes) != 1 or next(iter(dtypes)) not in names:
        raise ExportError(f"--like: expected one scale dtype among {sorted(names)}, found {sorted(dtypes) or 'none'}")
    return names[next(iter(dtypes))]


def block_of(config: dict) -> int:
    sizes = (config.get("quantization_config") or {}).get("weight_block_size")
    if not (isinstance(sizes, list) and len(sizes) == 2 and sizes[0] == sizes[1] and isinstance(sizes[0], int)):
        raise ExportError(f"--like: config.json's quantization_config.weight_block_size is {sizes!r}, "
                          "not a square block such as [128, 128]")
    return sizes[0]


def score_probe(out: str, probe_path: str) -> str:
    """<out>/probe.json: the trainer's probe scored by the exported model, as the check compares a server with it."""
    import transformers

    import deployment_probe

    probe = deployment_probe.read_probe(probe_path)
    architecture = read_config(out)["architectures"][0]
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = getattr(transformers, architecture).from_pretrained(out, device_map=device)
    model.eval()
    scored = deployment_probe.token_logprobs(model, probe["tokens"])
    deployment_probe.write_probe(out, probe["tokens"], probe["parent"], scored,
                                 "the FP8 export" + ("" if device == "cuda" else ", dequantised"))
    return deployment_probe.PROBE_FILE


def export(src: str, out: str, like: Optional[str], block: int, probe: Optional[str] = None) -> dict:
    if os.path.abspath(src) == os.path.abspath(out):
        raise ExportError("--out must be a new folder, not --src")
    source_map = shard_map(src)
    config = read_config(src)
    like_layout = layout(like) if like else None
    scale_dtype = scale_dtype_of(like_layout) if like_layout else torch.bfloat16
    if like:
        block = block_of(read_config(like))
    os.makedirs(out, exist_ok=True)
    if os.path.exists(os.path.join(out, REPORT)):
        os.remove(os.path.join(out, REPORT))  # written again last, once the export is whole
    by_file: Dict[str, List[str]] = {}
    for name, file in source_map.items():
        by_file.setdefault(file, []).append(name)
    weight_map: Dict[str, str] = {}
    quantised, kept, kept_matrices = [], [], []
    worst_ratio, worst_relative = 0.0, 0.0
    for file in sorted(by_file):
        tensors = {}
        with safe_open(os.path.join(src, file), framework="pt") as handle:
            for name in sorted(by_file[file]):
                tensor = handle.get_tensor(name)
                wanted = (name + SCALE_SUFFIX in like_layout) if like_layout is not None \
                    else quantised_by_rule(name, tensor)
                if not wanted:
                    tensors[name] = tensor.contiguous()
                    kept.append(name)
                    if tensor.dim() == 2 and name.endswith(".weight"):
                        kept_matrices.append(module_of(name))
                    continue
                values, scale = fp8_blocks.quantise(tensor, block, scale_dtype)
                error = (fp8_blocks.dequantise(values, scale, block) - tensor.float()).abs()
                worst_ratio = max(worst_ratio, float((error / fp8_blocks.error_bound(tensor, scale, block)).max()))
                norm = float(tensor.float().norm())
                worst_relative = max(worst_relative, float(error.norm()) / norm if norm > 0 else 0.0)
                tensors[name], tensors[name + SCALE_SUFFIX] = values, scale.contiguous()
                quantised.append(name)
        save_file(tensors, os.path.join(out, file), metadata={"format": "pt"})
        weight_map.update({name: file for name in tensors})
    if not quantised:
        raise ExportError(f"{src}: no weight matched what is quantised; is this the merged language model?")
    if os.path.isfile(os.path.join(src, INDEX)):
        total = sum(os.path.getsize(os.path.join(out, file)) for file in set(weight_map.values()))
        with open(os.path.join(out, INDEX), "w") as handle:
            json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, handle,
                      indent=2)
    for entry in os.listdir(src):
        path = os.path.join(src, entry)
        if os.path.isfile(path) and not entry.endswith(".safetensors") and entry not in (INDEX, "config.json", REPORT):
            shutil.copy(path, os.path.join(out, entry))
    config["quantization_config"] = (read_config(like)["quantization_config"] if like
                                     else rule_config(kept_matrices, block))
    with open(os.path.join(out, "config.json"), "w") as handle:
        json.dump(config, handle, indent=2)
    report = {"src": src, "out": out, "like": like, "block": block, "scaleDtype": str(scale_dtype).split(".")[-1],
              "quantised": len(quantised), "kept": len(kept),
              "maxErrorOverBound": worst_ratio, "maxRelativeError": worst_relative}
    if like:
        report["differences"] = compare(out, like)
    if probe:
        report["probe"] = score_probe(out, probe)
    with open(os.path.join(out, REPORT), "w") as handle:
        json.dump(report, handle, indent=2)
    return report


def compare(out: str, like: str) -> List[str]:
    """Every way `out` differs from `like` in tensor names, dtypes and shapes and in its FP8 settings."""
    ours, theirs = layout(out), layout(like)
    differences = [f"{name}: missing (the reference has {theirs[name][0]} {list(theirs[name][1])})"
                   for name in sorted(set(theirs) - set(ours))]
    differences += [f"{name}: not in the reference" for name in sorted(set(ours) - set(theirs))]
    for name in sorted(set(ours) & set(theirs)):
        if ours[name] != theirs[name]:
            differences.append(f"{name}: {ours[name][0]} {list(ours[name][1])}, "
                               f"the reference has {theirs[name][0]} {list(theirs[name][1])}")
    mine = read_config(out).get("quantization_config") or {}
    reference = read_config(like).get("quantization_config") or {}
    for key in ("quant_method", "fmt", "activation_scheme", "weight_block_size"):
        if mine.get(key) != reference.get(key):
            differences.append(f"config.json quantization_config.{key}: {mine.get(key)!r}, "
                               f"the reference has {reference.get(key)!r}")
    return differences


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=("export", "compare"))
    parser.add_argument("--src", help="the merged BF16 checkpoint (export)")
    parser.add_argument("--out", required=True, help="the FP8 checkpoint to write (export) or to check (compare)")
    parser.add_argument("--like", help="an FP8 checkpoint whose layout to follow and check against")
    parser.add_argument("--block", type=int, default=fp8_blocks.BLOCK)
    parser.add_argument("--probe", help="the trainer's probe.json, to score with the exported model (export)")
    args = parser.parse_args(argv)
    try:
        if args.command == "export":
            if not args.src:
                raise ExportError("export needs --src, the merged BF16 checkpoint")
            report = export(args.src, args.out, args.like, args.block, args.probe)
        else:
            if not args.like:
                raise ExportError("compare needs --like, the FP8 checkpoint to compare with")
            report = {"out": args.out, "like": args.like, "differences": compare(args.out, args.like)}
    except (ExportError, OSError, ValueError) as error:
        print(json.dumps({"error": str(error)}))
        return 1
    print(json.dumps(report))
    return 2 if report.get("differences") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
