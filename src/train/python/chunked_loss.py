"""The loss of one window, with memory bounded by the chunk, not by the labelled tokens.

A window of 49,152 tokens may label 20,000 of them. Projecting all of their hidden states through the output head at
once holds 20,000 × vocabulary logits (Qwen3.5/3.6: about 248k) in bf16, their float copy and the softmax's gradient:
about 50 GB beside the model. Here the hidden states of the labelled positions are projected `chunk` positions at a
time, each chunk under activation checkpointing: its logits are freed as soon as its summed cross-entropy is known
and computed again in the backward pass. The loss's own memory is then about chunk × vocabulary × 10 bytes whatever
the window labels, and the loss and the gradients are those of the unchunked computation (the sum is the same sum;
test/train/python/test_chunked_loss.py checks both).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import torch
import torch.nn.functional as functional
from torch.utils.checkpoint import checkpoint

from window_data import IGNORE_INDEX


def labelled_targets(window: Dict, device) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The window's input ids (1 × length), the positions whose next token is labelled, and those tokens."""
    labels: List[int] = window["labels"]
    positions = [p for p in range(len(labels) - 1) if labels[p + 1] != IGNORE_INDEX]
    input_ids = torch.tensor([window["input_ids"]], dtype=torch.long, device=device)
    return (input_ids, torch.tensor(positions, dtype=torch.long, device=device),
            torch.tensor([labels[p + 1] for p in positions], dtype=torch.long, device=device))


def summed_cross_entropy(hidden: torch.Tensor, head: torch.nn.Module, targets: torch.Tensor,
                         chunk: Optional[int]) -> torch.Tensor:
    """The cross-entropy summed over rows of `hidden` (labelled positions × hidden size) against `targets`, in
    float32. `chunk` positions at a time, each recomputed in the backward pass; `None`: all at once."""
    if chunk is None:
        return functional.cross_entropy(head(hidden).float(), targets, reduction="sum")

    def chunk_loss(states: torch.Tensor, chunk_targets: torch.Tensor) -> torch.Tensor:
        return functional.cross_entropy(head(states).float(), chunk_targets, reduction="sum")

    total = torch.zeros((), dtype=torch.float32, device=hidden.device)
    for start in range(0, hidden.shape[0], chunk):
        total = total + checkpoint(chunk_loss, hidden[start:start + chunk], targets[start:start + chunk],
                                   use_reentrant=False)
    return total


class WindowLoss(torch.nn.Module):
    """The model and its loss as one module, so that DDP or FSDP2 wrap exactly what a training step calls.

    The decoder runs to its final normalised hidden states; only the labelled positions' rows go on to the output
    head, `chunk` at a time. `model` is the peft model (LoRA layers inside the transformers model).
    """

    def __init__(self, model: torch.nn.Module, chunk: Optional[int]) -> None:
        super().__init__()
        self.model = model
        self.chunk = chunk

    def causal_lm(self) -> torch.nn.Module:
        """The transformers model under peft's wrapper (its LoRA layers inside)."""
        return self.model.get_base_model() if hasattr(self.model, "get_base_model") else self.model

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        causal_lm = self.causal_lm()
        hidden = causal_lm.get_decoder()(input_ids=input_ids, use_cache=False).last_hidden_state[0]
        head = causal_lm.get_output_embeddings()
        selected = hidden.index_select(0, positions.to(hidden.device))
        return summed_cross_entropy(selected, head, targets.to(head.weight.device), self.chunk)
