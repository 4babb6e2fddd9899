"""Attention weights in: any array-like (NumPy, a torch tensor, transformers' per-layer tuple)
to one float32 array (L, H, Tq, Tk), checked once here so nothing later checks again."""

from __future__ import annotations

import sys

import numpy as np

ROW_TOLERANCE = 1e-3  # a softmax row sums to 1; float32 over 32k keys stays well inside this


def to_numpy(value, what: str) -> np.ndarray:
    """A float32 array from NumPy, a torch tensor (torch is never imported here: a tensor can
    only exist if the caller imported it) or nested lists."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        value = value.detach().float().cpu().numpy()  # bf16/f16 have no NumPy dtype; f32 does
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} is not an array of numbers: {e}") from None
    if array.dtype == object:
        raise TypeError(f"{what} is not an array of numbers (ragged lists, or objects NumPy cannot read)")
    if not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        raise TypeError(f"{what} has dtype {array.dtype}, expected real numbers (float)")
    return array.astype(np.float32, copy=False)


def stack_layers(attention, what: str = "attention") -> np.ndarray:
    """(L, H, Tq, Tk) from an array of that shape, from (L, 1, H, Tq, Tk) (torch.stack of
    outputs.attentions), or from a list/tuple of per-layer (H, Tq, Tk) or (1, H, Tq, Tk)."""
    if isinstance(attention, (list, tuple)):
        if not attention:
            raise ValueError(f"{what} is an empty {type(attention).__name__}: expected one array per layer")
        layers = [_one_layer(to_numpy(a, f"{what}[{i}]"), f"{what}[{i}]") for i, a in enumerate(attention)]
        first = layers[0].shape
        for i, layer in enumerate(layers):
            if layer.shape != first:
                raise ValueError(f"{what}[{i}] has shape {list(layer.shape)}, but {what}[0] has {list(first)}: every layer must have the same heads and tokens")
        return np.stack(layers)  # (L, H, Tq, Tk)
    array = to_numpy(attention, what)
    if array.ndim == 5:
        if array.shape[1] != 1:
            raise ValueError(f"{what} has shape {list(array.shape)}: a batch of {array.shape[1]} rows; a figure draws one, e.g. {what}[:, i:i+1]")
        return array[:, 0]
    if array.ndim != 4:
        raise ValueError(f"{what} has {array.ndim} dimensions {list(array.shape)}, expected 4: (layers, heads, queries, keys)")
    return array


def _one_layer(layer: np.ndarray, what: str) -> np.ndarray:
    if layer.ndim == 4:
        if layer.shape[0] != 1:
            raise ValueError(f"{what} has shape {list(layer.shape)}: a batch of {layer.shape[0]} rows; a figure draws one, e.g. [a[i:i+1] for a in outputs.attentions]")
        return layer[0]
    if layer.ndim != 3:
        raise ValueError(f"{what} has {layer.ndim} dimensions {list(layer.shape)}, expected (heads, queries, keys) or (1, heads, queries, keys)")
    return layer


def check_weights(w: np.ndarray, what: str = "attention") -> None:
    """Refuses what a softmax cannot give: NaN, inf, negative weights, rows that sum to
    neither 1 nor 0 (a row of zeros is a fully masked query, which headmap draws as such)."""
    if 0 in w.shape:
        raise ValueError(f"{what} has shape {list(w.shape)}: no layers, heads or tokens")
    bad = ~np.isfinite(w)
    if bad.any():
        kind = "NaN" if np.isnan(w[bad]).any() else "inf"
        raise ValueError(f"{what} holds {kind} at {_where(bad)}")
    negative = w < 0
    if negative.any():
        at = tuple(int(i) for i in np.argwhere(negative)[0])
        raise ValueError(f"{what} holds a negative weight ({w[at]:.4g}) at {_where(negative)}: attention weights are a softmax, 0 to 1")
    if not w.any():
        raise ValueError(f"{what} is all zeros: every query fully masked leaves nothing to draw")
    sums = w.sum(axis=-1, dtype=np.float64)  # (L, H, Tq)
    off = (np.abs(sums - 1) > ROW_TOLERANCE) & (sums != 0)
    if off.any():
        layer, head, query = (int(i) for i in np.argwhere(off)[0])
        raise ValueError(
            f"{what} row at layer {layer}, head {head}, query {query} sums to {sums[layer, head, query]:.6g}: "
            f"each query's weights must sum to 1 (within {ROW_TOLERANCE:g}), or all be 0 for a fully masked query. "
            "Pass the softmax output (outputs.attentions), not the scores"
        )


def is_causal(w: np.ndarray) -> bool:
    """True when no query gives weight to a later key, in every layer and head (Tq == Tk)."""
    tq, tk = w.shape[-2:]
    if tq != tk:
        return False
    above = np.triu(np.ones((tq, tk), dtype=bool), k=1)  # (Tq, Tk)
    return not w[..., above].any()


def validity(w: np.ndarray, same_tokens: bool) -> tuple[np.ndarray, np.ndarray]:
    """Which tokens are real, read off the weights, since a caller's tokens carry no padding
    mask: a key no query attends to in any layer or head is one the mask hid (PAD), and a query
    whose weights are all 0 everywhere was fully masked. With one token list on both sides
    (self-attention) a PAD key is a PAD query too. Returns (query_valid (Tq,), key_valid (Tk,))."""
    key_valid = w.any(axis=(0, 1, 2))  # (Tk,)
    query_valid = w.any(axis=(0, 1, 3))  # (Tq,)
    if same_tokens:
        query_valid &= key_valid
    return query_valid, key_valid


def _where(mask: np.ndarray) -> str:
    layer, head, query, key = (int(i) for i in np.argwhere(mask)[0])
    return f"layer {layer}, head {head}, query {query}, key {key}"
