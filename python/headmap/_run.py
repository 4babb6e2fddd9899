"""A run of headmap's native core (headmap.load(...).run(...)) as the figure functions take it:
the weights and tokens of one batch row at one place, the batch's padding left out."""

from __future__ import annotations

import numpy as np


def is_run(value) -> bool:
    """Whether `value` is a native run, told without importing the native module (a checkout
    without it still draws NumPy weights)."""
    kind = type(value)
    return kind.__name__ == "Run" and kind.__module__ == "headmap._native"


def place_of(run, place, row: int):
    """(weights (L, H, Tq, Tk), query tokens, key tokens, place name) of one batch row, its
    padding (a shorter text in a batch) left out."""
    name = place if place is not None else run.places[0]
    tokens = run.tokens(place=name, row=row)
    weights = run.weights(place=name, row=row)
    queries = np.flatnonzero(tokens["query_valid"])
    keys = np.flatnonzero(tokens["key_valid"])
    weights = weights[:, :, queries][:, :, :, keys]
    return (weights, [tokens["queries"][i] for i in queries], [tokens["keys"][i] for i in keys], name)
