"""Synthetic attention for the tests: NumPy only, no model."""

import numpy as np


def softmax_attention(layers=2, heads=3, tq=5, tk=None, causal=False, seed=0):
    """Synthetic softmax weights (L, H, Tq, Tk), float32, rows summing to 1."""
    tk = tq if tk is None else tk
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((layers, heads, tq, tk)).astype(np.float32) * 2  # (L, H, Tq, Tk)
    if causal:
        scores = np.where(np.tril(np.ones((tq, tk), dtype=bool)), scores, -np.inf)
    scores -= scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    return (weights / weights.sum(axis=-1, keepdims=True)).astype(np.float32)


def words(n):
    return [f"w{i}" for i in range(n)]
