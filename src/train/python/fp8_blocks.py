"""Block-wise FP8 (float8 e4m3) quantisation of one weight matrix, as Qwen's own FP8 checkpoints store it.

A matrix of shape (rows, columns) is cut into blocks of 128 × 128 (the last row and column of blocks may be partial).
Each block keeps one scale, the largest magnitude in the block divided by 448 (e4m3's largest finite value), and its
values divided by that scale, rounded to float8 e4m3. The checkpoint stores the float8 matrix under the weight's name
and the scales, shape (ceil(rows/128), ceil(columns/128)), under `<name>_scale_inv`: the weight is read back as
float8 value × scale.

The scale is rounded to its stored dtype (bfloat16 in Qwen's checkpoints) BEFORE the values are divided by it, and
rounded up when rounding made it smaller, so that the stored scale is the one the values were quantised with and no
value is clipped: dequantising gives back every weight within e4m3's rounding error, half a unit in the last of its
three mantissa bits (at most 1/16 of the value), or half the smallest subnormal step (scale × 2^-10) near zero.
"""

from __future__ import annotations

import math
from typing import Tuple

import torch

FP8 = torch.float8_e4m3fn
FP8_MAX = float(torch.finfo(FP8).max)  # 448
BLOCK = 128
RELATIVE_ERROR = 2.0**-4  # half of e4m3's 2^-3 mantissa step, relative to the value
SUBNORMAL_ERROR = 2.0**-10  # half of e4m3's smallest subnormal step 2^-9, in units of the block's scale


def block_grid(shape: Tuple[int, int], block: int = BLOCK) -> Tuple[int, int]:
    """The shape of the scale tensor for a matrix of `shape`."""
    return math.ceil(shape[0] / block), math.ceil(shape[1] / block)


def _padded_blocks(matrix: torch.Tensor, block: int) -> torch.Tensor:
    rows, columns = matrix.shape
    grid_rows, grid_columns = block_grid((rows, columns), block)
    padded = torch.zeros(grid_rows * block, grid_columns * block, dtype=torch.float32)
    padded[:rows, :columns] = matrix.float()
    return padded.reshape(grid_rows, block, grid_columns, block)


def _stored_scale(largest: torch.Tensor, scale_dtype: torch.dtype) -> torch.Tensor:
    """The scale of each block in `scale_dtype`, never smaller than largest / 448 (so no value is clipped)."""
    exact = (largest / FP8_MAX).clamp(min=torch.finfo(torch.float32).tiny)
    stored = exact.to(scale_dtype)
    too_small = stored.float() < exact
    if too_small.any():
        stored[too_small] = torch.nextafter(stored[too_small], torch.full_like(stored[too_small], math.inf))
    return stored


def quantise(matrix: torch.Tensor, block: int = BLOCK,
             scale_dtype: torch.dtype = torch.bfloat16) -> Tuple[torch.Tensor, torch.Tensor]:
    """(float8 matrix of the same shape, scales of shape block_grid(matrix.shape))."""
    if matrix.dim() != 2:
        raise ValueError(f"block-wise FP8 needs a matrix, not a tensor of shape {tuple(matrix.shape)}")
    if not torch.isfinite(matrix).all():
        raise ValueError("the matrix holds a NaN or an infinity: it cannot be quantised")
    blocks = _padded_blocks(matrix, block)
    scale = _stored_scale(blocks.abs().amax(dim=(1, 3)), scale_dtype)
    values = (blocks / scale.float()[:, None, :, None]).clamp(-FP8_MAX, FP8_MAX).to(FP8)
    rows, columns = matrix.shape
    return values.reshape(blocks.shape[0] * block, -1)[:rows, :columns].contiguous(), scale


def dequantise(values: torch.Tensor, scale: torch.Tensor, block: int = BLOCK) -> torch.Tensor:
    """The float32 matrix a float8 matrix and its block scales stand for."""
    rows, columns = values.shape
    expected = block_grid((rows, columns), block)
    if tuple(scale.shape) != expected:
        raise ValueError(f"scales of shape {tuple(scale.shape)} do not fit a {rows}×{columns} matrix "
                         f"in blocks of {block} (expected {expected})")
    full = scale.float().repeat_interleave(block, 0).repeat_interleave(block, 1)[:rows, :columns]
    return values.float() * full


def error_bound(matrix: torch.Tensor, scale: torch.Tensor, block: int = BLOCK) -> torch.Tensor:
    """Per element, the largest |weight - dequantised| block-wise e4m3 rounding allows."""
    rows, columns = matrix.shape
    full = scale.float().repeat_interleave(block, 0).repeat_interleave(block, 1)[:rows, :columns]
    return torch.maximum(matrix.float().abs() * RELATIVE_ERROR, full * SUBNORMAL_ERROR) * (1 + 1e-6)
