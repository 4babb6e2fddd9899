"""Bad input is refused with a Python error that names what is wrong, before any encoding."""

import numpy as np
import pytest

import headmap
from synthetic import softmax_attention, words


def spoiled(change):
    w = softmax_attention(2, 3, 4)
    change(w)
    return w


def nan(w):
    w[1, 2, 0, 3] = np.nan


def inf(w):
    w[0, 1, 2, 0] = np.inf


def negative(w):
    w[1, 0, 2, 1] = -0.25
    w[1, 0, 2, 0] += 0.25  # the row still sums to 1


def short_row(w):
    w[0, 2, 1] *= 0.9


CASES = [
    ("three dimensions", lambda: headmap.show(softmax_attention()[0], words(5)), ValueError,
     r"attention has 3 dimensions \[3, 5, 5\], expected 4: \(layers, heads, queries, keys\)"),
    ("a matrix", lambda: headmap.show(np.eye(3), words(3)), ValueError, "attention has 2 dimensions"),
    ("a batch of two", lambda: headmap.show(softmax_attention(3, 2, 4).reshape(3, 2, 1, 4, 4).repeat(2, 2).transpose(0, 2, 1, 3, 4), words(4)),
     ValueError, "a batch of 2 rows; a figure draws one"),
    ("per layer, a batch of two", lambda: headmap.show([softmax_attention(2, 2, 3)], words(3)), ValueError,
     r"attention\[0\] has shape \[2, 2, 3, 3\]: a batch of 2 rows"),
    ("layers that differ", lambda: headmap.show([softmax_attention(1, 2, 3)[0], softmax_attention(1, 3, 3)[0]], words(3)),
     ValueError, r"attention\[1\] has shape \[3, 3, 3\], but attention\[0\] has \[2, 3, 3\]"),
    ("no layers", lambda: headmap.show([], words(3)), ValueError, "attention is an empty list"),
    ("text", lambda: headmap.show([["a"]], words(1)), TypeError, "dtype <U1, expected real numbers"),
    ("too few tokens", lambda: headmap.show(softmax_attention(), words(4)), ValueError,
     r"4 query tokens for attention of shape \[2, 3, 5, 5\] \(layers, heads, queries, keys\): expected 5"),
    ("too many key tokens", lambda: headmap.show(softmax_attention(1, 1, 2, 3), words(2), key_tokens=words(4)), ValueError,
     "4 key tokens for attention .*: expected 3"),
    ("no tokens", lambda: headmap.show(softmax_attention(), []), ValueError, "tokens is empty"),
    ("a string for tokens", lambda: headmap.show(softmax_attention(), "hello"), TypeError, "tokens is a single string"),
    ("a number among tokens", lambda: headmap.show(softmax_attention(), ["a", "b", 3, "d", "e"]), TypeError, r"tokens\[2\] is int"),
    ("NaN", lambda: headmap.show(spoiled(nan), words(4)), ValueError, "attention holds NaN at layer 1, head 2, query 0, key 3"),
    ("inf", lambda: headmap.show(spoiled(inf), words(4)), ValueError, "attention holds inf at layer 0, head 1, query 2, key 0"),
    ("negative", lambda: headmap.show(spoiled(negative), words(4)), ValueError,
     r"negative weight \(-0.25\) at layer 1, head 0, query 2, key 1"),
    ("a row short of 1", lambda: headmap.show(spoiled(short_row), words(4)), ValueError,
     r"row at layer 0, head 2, query 1 sums to 0.9: .*within 0.001.*all be 0"),
    ("all zeros", lambda: headmap.show(np.zeros((1, 1, 2, 2)), words(2)), ValueError, "all zeros: every query fully masked"),
    ("scores, not weights", lambda: headmap.show(np.ones((1, 1, 2, 2)), words(2)), ValueError, "not the scores"),
    ("layer past the last", lambda: headmap.show(softmax_attention(), words(5), layer=2), ValueError,
     "layer=2 is out of range: there are 2 layers, counted from 0"),
    ("negative head", lambda: headmap.show(softmax_attention(), words(5), head=-1), ValueError,
     "head=-1 is out of range: there are 3 heads"),
    ("a float layer", lambda: headmap.show(softmax_attention(), words(5), layer=1.0), TypeError, "layer=1.0: expected an int"),
    ("an unknown view", lambda: headmap.show(softmax_attention(), words(5), view="steps"), ValueError,
     "view='steps': expected one of heatmap, grid, lines, atlas, rollout"),
    ("an unknown place", lambda: headmap.show(softmax_attention(), words(5), place="encoder"), ValueError,
     "place='encoder': expected one of encoder_self, decoder_self, cross"),
    ("an unknown action", lambda: headmap.show(softmax_attention(), words(5), html_action="save"), ValueError,
     "html_action='save': expected 'view'"),
    ("an unknown precision", lambda: headmap.show(softmax_attention(), words(5), precision="bf16"), ValueError,
     "precision='bf16': expected one of f16, f32"),
    ("an unknown language", lambda: headmap.show(softmax_attention(), words(5), lang="fr"), ValueError, "lang='fr'"),
    ("a height of zero", lambda: headmap.show(softmax_attention(), words(5), height=0), ValueError, "height=0"),
    ("a model instead of its type", lambda: headmap.show(softmax_attention(), words(5), model_type=object()), TypeError,
     "model_type is object, expected str"),
    ("a string of special tokens", lambda: headmap.show(softmax_attention(), words(5), special_tokens="[CLS]"), TypeError,
     "special_tokens is a single string"),
]


@pytest.mark.parametrize("make, error, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_is_refused_by_name(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_rows_of_zeros_are_fully_masked_queries_and_accepted():
    w = softmax_attention(1, 1, 3)
    w[0, 0, 0] = 0
    assert headmap.show(w, words(3), html_action="return").data


def test_sums_within_the_tolerance_are_accepted():
    w = softmax_attention(1, 1, 3).astype(np.float64)
    w[0, 0, 0] *= 1 + 9e-4
    assert headmap.show(w, words(3), html_action="return").data
