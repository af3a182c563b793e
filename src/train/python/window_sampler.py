"""What the trainer draws and how it weighs it, with no torch: the window sampler, the learning-rate schedule, the
steps that validate and checkpoint, and the weight of each window in a step's loss.

The sampler is the TypeScript one's (src/distill/window-sampler.ts), ported draw for draw: the same mulberry32
generator from the same seed, tasks in the same order, the same three draws per window (task, pool, window), so
`sample_windows` here and `sampleWindows` there choose the same windows (test/train/python-script.e2e.test.ts checks
it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Sequence

from window_data import IGNORE_INDEX, DataError

MASK32 = 0xFFFFFFFF


class SeededRandom:
    """mulberry32, as `seededRandom` in TypeScript: uniform floats in [0, 1), the same sequence for the same seed.

    JavaScript's `Math.imul`, `^` and `>>>` all work modulo 2**32, so masking every intermediate to 32 bits gives the
    same bits; the final division by 2**32 is exact in both languages.
    """

    def __init__(self, seed: int) -> None:
        if not isinstance(seed, int) or seed < 0 or seed > 2**53 - 1:
            raise DataError(f"seed {seed!r}: use a non-negative integer below 2**53")
        high = seed // 2**32
        self.state = ((seed & MASK32) ^ ((high * 0x9E3779B9) & MASK32)) & MASK32

    def __call__(self) -> float:
        self.state = (self.state + 0x6D2B79F5) & MASK32
        mixed = self.state
        mixed = ((mixed ^ (mixed >> 15)) * (mixed | 1)) & MASK32
        mixed = (mixed ^ ((mixed + (((mixed ^ (mixed >> 7)) * (mixed | 61)) & MASK32)) & MASK32)) & MASK32
        return ((mixed ^ (mixed >> 14)) & MASK32) / 2**32


def _utf16_order(text: str) -> bytes:
    # JavaScript's default sort compares UTF-16 code units; this key gives the same order.
    return text.encode("utf-16-be")


@dataclass
class TaskPools:
    task: str
    orchestrator: List[int]
    others: List[int]
    orchestrator_chance: float


def sampler_pools(windows: Sequence[Dict[str, Any]], orchestrator_probability: float) -> List[TaskPools]:
    """Per task (sorted as JavaScript sorts), the indices of its orchestrator windows and of its other windows."""
    if not 0 <= orchestrator_probability <= 1:
        raise DataError(f"orchestratorProbability {orchestrator_probability}: use a number from 0 to 1")
    by_task: Dict[str, TaskPools] = {}
    for index, window in enumerate(windows):
        pools = by_task.setdefault(window["task"], TaskPools(window["task"], [], [], 0.0))
        (pools.orchestrator if window["role"] == "orchestrator" else pools.others).append(index)
    ordered = [by_task[task] for task in sorted(by_task, key=_utf16_order)]
    for pools in ordered:
        # A task with only one kind of window always draws that kind.
        if not pools.others:
            pools.orchestrator_chance = 1.0
        elif not pools.orchestrator:
            pools.orchestrator_chance = 0.0
        else:
            pools.orchestrator_chance = orchestrator_probability
    return ordered


def sample_windows(windows: Sequence[Dict[str, Any]], steps: int, batch_size: int, seed: int,
                   orchestrator_probability: float) -> List[int]:
    """`steps * batch_size` window indices: a task uniformly, then its orchestrator pool with the task's chance (else
    its subagent and auxiliary windows), then a window of the pool uniformly; with replacement."""
    if not windows:
        raise DataError("there are no training windows to sample from")
    pools = sampler_pools(windows, orchestrator_probability)
    random = SeededRandom(seed)
    draws: List[int] = []
    for _ in range(steps * batch_size):
        task = pools[int(random() * len(pools))]
        pool = task.orchestrator if random() < task.orchestrator_chance else task.others
        draws.append(pool[int(random() * len(pool))])
    return draws


def learning_rate_at(step: int, hyper: Dict[str, Any]) -> float:
    """The rate for 0-based optimizer step `step`: linear warm-up to the peak, then cosine decay that reaches
    `minLearningRateRatio` of the peak on the last step."""
    peak = hyper["learningRate"]
    floor = peak * hyper["minLearningRateRatio"]
    warmup = hyper["warmupSteps"]
    if step < warmup:
        return peak * (step + 1) / warmup
    decay_steps = max(1, hyper["steps"] - 1 - warmup)
    progress = min(1.0, (step - warmup) / decay_steps)
    return floor + (peak - floor) * 0.5 * (1 + math.cos(math.pi * progress))


def window_weights(token_counts: Sequence[int], normalization: str) -> List[float]:
    """The weight of each window's summed cross-entropy in the loss of its step (or of the validation set).

    `window`, the official code's: each window's mean over its labelled tokens, then the mean over the windows, so a
    200-token orchestrator window weighs as much as a 20,000-token subagent one and the sampler's one-third share of
    orchestrator windows is a third of the gradient. `token`: the mean over every labelled token, so a window weighs
    what it holds. A window with no labelled token weighs nothing either way.
    """
    if normalization == "window":
        windows = sum(1 for count in token_counts if count > 0)
        return [1.0 / (windows * count) if count > 0 else 0.0 for count in token_counts]
    if normalization == "token":
        tokens = sum(count for count in token_counts if count > 0)
        return [1.0 / tokens if count > 0 else 0.0 for count in token_counts]
    raise DataError(f"lossNormalization {normalization!r}: use \"window\" or \"token\"")


def combined_loss(summed_losses: Sequence[float], token_counts: Sequence[int], normalization: str) -> float:
    """The loss of windows whose summed cross-entropies and labelled-token counts are given."""
    weights = window_weights(token_counts, normalization)
    return sum(weight * loss for weight, loss in zip(weights, summed_losses))


def predicted_tokens(window: Dict[str, Any]) -> int:
    """Positions whose next token is labelled: what the window's loss sums over."""
    return sum(1 for label in window["labels"][1:] if label != IGNORE_INDEX)


def evaluation_steps(hyper: Dict[str, Any]) -> List[int]:
    steps = hyper["steps"]
    return sorted({s for s in range(hyper["evalEvery"], steps + 1, hyper["evalEvery"])} | {steps})


def checkpoint_steps(hyper: Dict[str, Any]) -> List[int]:
    steps = hyper["steps"]
    return sorted({s for s in range(hyper["checkpointEvery"], steps + 1, hyper["checkpointEvery"])} | {steps})


def resume_steps(hyper: Dict[str, Any]) -> List[int]:
    """Steps after which the whole training state is saved, to resume from: every `resumeEvery`, not the last (the
    run is done then)."""
    return list(range(hyper["resumeEvery"], hyper["steps"], hyper["resumeEvery"]))
