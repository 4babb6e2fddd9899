"""From checked arrays and tokens to a Figure: each place's mask, the element's attributes, and
every setting checked against the weights before any encoding starts."""

from __future__ import annotations

import operator

import numpy as np

from ._figure import PLACES, PRECISIONS, Figure, Place
from ._tokens import kinds, prettify
from ._weights import check_weights, is_causal, validity

VIEWS = ("heatmap", "grid", "lines", "atlas", "rollout")  # the widget's views that need only weights
LANGS = ("en", "ko")
COLORMAPS = ("viridis", "magma", "blues")
THEMES = ("light", "dark", "auto")


def make_place(weights: np.ndarray, queries: list[str], keys: list[str], *, place=None,
               special_tokens=None, pretty=False, what="attention") -> tuple[str, Place]:
    """One place from its (L, H, Tq, Tk) weights. Without `place`, weights with nothing above
    the diagonal are a decoder's (mask causal) and others an encoder's (mask padding). Tokens
    the weights show were masked out are marked PAD (see _weights.validity)."""
    _, _, tq, tk = weights.shape
    shape = f"{list(weights.shape)} (layers, heads, queries, keys)"
    if len(queries) != tq:
        raise ValueError(f"{len(queries)} query tokens for {what} of shape {shape}: expected {tq}")
    if len(keys) != tk:
        raise ValueError(f"{len(keys)} key tokens for {what} of shape {shape}: expected {tk}")
    check_weights(weights, what)
    causal = is_causal(weights)
    if place is None:
        place = "decoder_self" if causal else "encoder_self"
    elif place not in PLACES:
        raise ValueError(f"place={place!r}: expected one of {', '.join(PLACES)}")
    # a decoder's self-attention whose weights see later keys was not run causally: say so
    mask = {"encoder_self": "padding", "cross": "cross"}.get(place) or ("causal" if causal else "none")
    query_valid, key_valid = validity(weights, same_tokens=place != "cross" and queries == keys)
    labels = prettify if pretty else list
    return place, Place(
        weights=weights, mask=mask,
        queries=labels(queries), keys=labels(keys),
        query_valid=query_valid.tolist(), key_valid=key_valid.tolist(),
        query_kinds=_pad(kinds(queries, special_tokens), query_valid),
        key_kinds=_pad(kinds(keys, special_tokens), key_valid),
    )


def _pad(token_kinds: list[str], valid: np.ndarray) -> list[str]:
    return [kind if ok else "pad" for kind, ok in zip(token_kinds, valid)]


def make_figure(places: dict[str, Place], *, shown: str, view="heatmap", layer=0, head=0, lang=None,
                colormap=None, height=None, theme=None, model_type=None, precision="f16",
                sentence_b_start=None) -> Figure:
    """The figure showing `places[shown]` first, every setting checked against its shape."""
    layers, heads = places[shown].weights.shape[:2]
    if view not in VIEWS:
        raise ValueError(f"view={view!r}: expected one of {', '.join(VIEWS)} (the views drawn from weights alone)")
    layer = _index(layer, layers, "layer", "layers")
    head = "all" if head == "all" else _index(head, heads, "head", "heads")
    attributes = {"view": view, "place": shown, "layer": str(layer), "head": str(head)}
    for name, value, allowed in (("lang", lang, LANGS), ("colormap", colormap, COLORMAPS), ("theme", theme, THEMES)):
        if value is not None:
            if value not in allowed:
                raise ValueError(f"{name}={value!r}: expected one of {', '.join(allowed)}")
            attributes[name] = value
    if height is not None:
        if isinstance(height, bool) or not isinstance(height, (int, np.integer)) or height <= 0:
            raise ValueError(f"height={height!r}: expected a number of CSS pixels, a positive int")
        attributes["height"] = str(int(height))
    if model_type is not None and not isinstance(model_type, str):
        raise TypeError(f"model_type is {type(model_type).__name__}, expected str such as model.config.model_type")
    if precision not in PRECISIONS:
        raise ValueError(f"precision={precision!r}: expected one of {', '.join(PRECISIONS)}")
    if sentence_b_start is not None:
        selfs = [p for name, p in places.items() if name != "cross"]
        if not selfs:
            raise ValueError("sentence_b_start marks a sentence pair within one self-attention; this figure has cross-attention only")
        count = len(selfs[0].queries)
        if isinstance(sentence_b_start, bool) or not isinstance(sentence_b_start, (int, np.integer)):
            raise TypeError(f"sentence_b_start={sentence_b_start!r}: expected an int, the index of sentence B's first token")
        if not 0 <= sentence_b_start <= count:
            raise ValueError(f"sentence_b_start={sentence_b_start} is out of range: 0 to {count}, the number of tokens")
        sentence_b_start = int(sentence_b_start)
    return Figure(places=places, attributes=attributes, model_type=model_type or "unknown",
                  precision=precision, sentence_b_start=sentence_b_start)


def _index(value, count: int, name: str, of: str) -> int:
    """An int in [0, count), NumPy ints included, bools and floats refused."""
    if isinstance(value, bool):
        raise TypeError(f"{name}={value!r}: expected an int")
    try:
        index = operator.index(value)
    except TypeError:
        raise TypeError(f"{name}={value!r}: expected an int") from None
    if not 0 <= index < count:
        raise ValueError(f"{name}={index} is out of range: there are {count} {of}, counted from 0")
    return index
