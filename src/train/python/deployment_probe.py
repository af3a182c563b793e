"""The deployment check's probe: a fixed token sequence, and the log-probability each of its tokens gets from the
parent and from the generation just trained, written as probe.json beside the training report.

After a deployment, mass asks the server for the same log-probabilities (vLLM's `prompt_logprobs`) and compares:
a server that answers as the parent, or as anything but the new weights, is caught before any episode runs on it.

The probe is the start of the first training window the run drew: text the adapter was trained on, so the generation
differs from its parent there as much as anywhere.
"""

from __future__ import annotations

import json
import os
from typing import Dict, List, Sequence

import torch

PROBE_FILE = "probe.json"
PROBE_TOKENS = 64


def probe_tokens(window_ids: Sequence[int], length: int = PROBE_TOKENS) -> List[int]:
    tokens = [int(token) for token in window_ids[:length]]
    if len(tokens) < 2:
        raise ValueError("the probe needs at least two tokens; the first training window is shorter")
    return tokens


def token_logprobs(model, tokens: Sequence[int]) -> List[float]:
    """log p(token i | tokens before i) for i = 1..n-1, in float32, as a server's prompt_logprobs gives them."""
    device = next(model.parameters()).device
    ids = torch.tensor([list(tokens)], device=device)
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, :-1].float()
    chosen = torch.log_softmax(logits, dim=-1).gather(1, ids[0, 1:, None])[:, 0]
    return [float(value) for value in chosen.cpu()]


def write_probe(out: str, tokens: Sequence[int], parent: Sequence[float], trained: Sequence[float],
                weights: str) -> Dict[str, object]:
    """probe.json: what the check compares the server's answer with. `weights` says which weights `trained` was
    computed on (the merged model, or the parent with the adapter)."""
    record = {"schemaVersion": 1, "kind": "deployment-probe", "tokens": list(tokens), "parent": list(parent),
              "trained": list(trained), "trainedWeights": weights,
              "maxGenerationChange": max(abs(a - b) for a, b in zip(parent, trained))}
    with open(os.path.join(out, PROBE_FILE), "w") as handle:
        json.dump(record, handle)
    return record


def read_probe(path: str) -> Dict[str, object]:
    with open(path) as handle:
        return json.load(handle)
