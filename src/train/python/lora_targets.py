"""Which linear layers LoRA goes on: the language model's, by the last part of their names, never a vision tower's.
No torch here, so the rule is tested on names alone; `lora_target_modules` applies it to a loaded model."""

from __future__ import annotations

from typing import Dict, List, Sequence

from window_data import DataError


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


def lora_target_modules(model, torch, wanted: Sequence[str]) -> List[str]:
    """`choose_lora_targets` on the model's linear layers, the language model being what transformers' get_decoder
    finds (Qwen3: `model`; Qwen3.5/3.6: `model.language_model`)."""
    names = {id(module): name for name, module in model.named_modules()}
    decoder = model.get_decoder() if hasattr(model, "get_decoder") else model
    language_model = names.get(id(decoder), "")
    linear_layers = [name for name, module in model.named_modules() if isinstance(module, torch.nn.Linear)]
    return choose_lora_targets(linear_layers, language_model, wanted)
