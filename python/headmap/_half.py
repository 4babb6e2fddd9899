"""float32 → float16, rounded to nearest even exactly as NumPy's astype, but fast where
attention lives: NumPy takes a slow path for every result below 2⁻¹⁴ (a subnormal half), and
in a softmax row over 512 keys most weights are that small (60% in BERT-like heads: 2.4 s
against 0.8 s for 12 × 12 × 512 × 512). The bit trick is Fabian Giesen's float_to_half_fast3_rtne."""

from __future__ import annotations

import numpy as np

CHUNK = 1 << 22  # elements a pass: the temporaries stay at a few tens of MB
SUBNORMAL = np.uint32(113 << 23)  # float32 bits of 2⁻¹⁴, the smallest normal half
REBIAS = np.uint32(0xC8000FFF)  # (15 − 127) << 23, mod 2³², plus 0xFFF for rounding at bit 13
MAGIC_BITS = np.uint32(((127 - 15) + (23 - 10) + 1) << 23)  # 0.5: its ulp is a half's smallest subnormal
MAGIC = MAGIC_BITS.reshape(1).view(np.float32)[0]


def to_half(weights: np.ndarray) -> np.ndarray:
    """`weights` (finite, ≥ 0, < 65520: checked attention weights) as little-endian float16."""
    flat = np.ascontiguousarray(weights, dtype=np.float32).reshape(-1)
    out = np.empty(flat.shape, dtype=np.uint16)
    for start in range(0, flat.size, CHUNK):
        w = flat[start:start + CHUNK]
        u = w.view(np.uint32)
        # normal halves: rebias the exponent, round to nearest even at bit 13, drop 13 bits
        normal = (u + REBIAS + ((u >> 13) & 1)) >> 13
        # subnormal halves: adding 0.5 lets the float unit round the value to a multiple of 2⁻²⁴
        subnormal = (w + MAGIC).view(np.uint32) - MAGIC_BITS
        out[start:start + CHUNK] = np.where(u < SUBNORMAL, subnormal, normal)
    return out.view("<f2").reshape(weights.shape)
