"""headmap.show: what it accepts, what the figure says about each place, and how it displays."""

import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import headmap
from figure_parts import Parts, unpack
from synthetic import softmax_attention, words


def test_an_array_gives_one_encoder_place_with_its_tokens_and_kinds(tmp_path):
    w = softmax_attention(2, 3, 4)
    tokens = ["[CLS]", "play", "##ing", "[SEP]"]
    fig = headmap.show(w, tokens, html_action="return")
    tensors, doc, _ = unpack(fig.data, tmp_path)
    assert list(tensors) == ["rows.0.encoder_self"]
    assert doc["format"] == "headmap.attention" and doc["version"] == 1 and doc["model_type"] == "unknown"
    place = doc["rows"][0]["attention"]["encoder_self"]
    assert place["mask"] == "padding" and place["what_if"] is False
    assert place["queries"] == place["keys"] == tokens
    assert place["query_valid"] == place["key_valid"] == [True] * 4
    assert place["query_kinds"] == ["special", "word", "continuation", "special"]


def test_weights_with_nothing_above_the_diagonal_are_a_causal_decoder(tmp_path):
    fig = headmap.show(softmax_attention(2, 2, 6, causal=True), words(6), html_action="return")
    _, doc, _ = unpack(fig.data, tmp_path)
    assert doc["rows"][0]["attention"]["decoder_self"]["mask"] == "causal"
    assert Parts(fig.data).element()["place"] == "decoder_self"


def test_a_decoder_place_whose_weights_see_later_keys_is_said_to_hide_nothing(tmp_path):
    fig = headmap.show(softmax_attention(1, 1, 3), words(3), place="decoder_self", html_action="return")
    _, doc, _ = unpack(fig.data, tmp_path)
    assert doc["rows"][0]["attention"]["decoder_self"]["mask"] == "none"


def test_cross_attention_reads_queries_and_keys_from_their_own_tokens(tmp_path):
    w = softmax_attention(1, 2, 3, 5)
    fig = headmap.show(w, ["a", "b", "c"], key_tokens=["<s>", "x", "y", "z", "</s>"], place="cross", html_action="return")
    tensors, doc, _ = unpack(fig.data, tmp_path)
    cross = doc["rows"][0]["attention"]["cross"]
    assert cross["mask"] == "cross" and cross["queries"] == ["a", "b", "c"]
    assert cross["key_kinds"] == ["special", "word", "word", "word", "special"]
    assert tensors["rows.0.cross"].shape == (1, 2, 3, 5)


def test_unequal_sides_without_a_place_are_an_encoder_as_documented(tmp_path):
    fig = headmap.show(softmax_attention(1, 1, 2, 3), ["a", "b"], key_tokens=["x", "y", "z"], html_action="return")
    assert Parts(fig.data).element()["place"] == "encoder_self"


def test_the_element_carries_view_layer_head_and_the_optional_settings():
    fig = headmap.show(softmax_attention(3, 4, 5), words(5), view="lines", layer=2, head=3, lang="ko",
                       colormap="magma", height=420, html_action="return")
    assert Parts(fig.data).element() == {"view": "lines", "place": "encoder_self", "layer": "2", "head": "3",
                                         "lang": "ko", "colormap": "magma", "height": "420"}
    plain = Parts(headmap.show(softmax_attention(), words(5), html_action="return").data).element()
    assert plain == {"view": "heatmap", "place": "encoder_self", "layer": "0", "head": "0"}, "unset settings stay unset"
    grid = Parts(headmap.show(softmax_attention(), words(5), view="grid", head="all", html_action="return").data)
    assert grid.element()["head"] == "all"


@pytest.mark.parametrize("view", ["heatmap", "grid", "lines", "atlas", "rollout"])
def test_every_view_drawn_from_weights_alone_is_accepted(view):
    assert Parts(headmap.show(softmax_attention(), words(5), view=view, html_action="return").data).element()["view"] == view


def test_transformers_outputs_attentions_a_tuple_per_layer_is_stacked(tmp_path):
    w = softmax_attention(3, 2, 4)
    as_outputs = tuple(w[i][None] for i in range(3))  # (1, H, T, T) per layer, as transformers gives
    as_heads = [w[i] for i in range(3)]  # (H, T, T) per layer
    stacked = w[:, None]  # torch.stack(outputs.attentions): (L, 1, H, T, T)
    for form in (as_outputs, as_heads, stacked):
        tensors, _, _ = unpack(headmap.show(form, words(4), html_action="return").data, tmp_path)
        np.testing.assert_array_equal(tensors["rows.0.encoder_self"], w.astype(np.float16), err_msg=type(form).__name__)


class FakeTensor:
    """Quacks like a torch tensor in bf16 on a GPU: only .detach().float().cpu().numpy() gives data."""

    def __init__(self, array):
        self.array, self.calls = array, []

    def __getattr__(self, name):
        if name in ("detach", "float", "cpu"):
            return lambda: (self.calls.append(name), self)[1]
        if name == "numpy":
            return lambda: (self.calls.append(name), self.array)[1]
        raise AttributeError(name)


def test_a_torch_tensor_is_read_through_detach_float_cpu_numpy(monkeypatch, tmp_path):
    torch = types.ModuleType("torch")
    torch.Tensor = FakeTensor
    monkeypatch.setitem(sys.modules, "torch", torch)
    w = softmax_attention(1, 2, 3)
    layer = FakeTensor(w[0][None])
    tensors, _, _ = unpack(headmap.show((layer,), words(3), html_action="return").data, tmp_path)
    assert layer.calls == ["detach", "float", "cpu", "numpy"]
    np.testing.assert_array_equal(tensors["rows.0.encoder_self"], w.astype(np.float16))


def test_torch_is_never_imported_by_headmap():
    code = ("import sys, numpy as np, headmap\n"
            "w = np.full((1, 1, 2, 2), 0.5)\n"
            "headmap.show(w, ['a', 'b'], html_action='return').data\n"
            "assert 'torch' not in sys.modules, 'headmap imported torch'\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(headmap.__file__).parent.parent)


def test_model_type_special_tokens_and_sentence_b_start_reach_the_document(tmp_path):
    fig = headmap.show(softmax_attention(1, 1, 5), ["<s>", "a", "</s>", "b", "</s>"], model_type="roberta",
                       special_tokens=["<s>"], sentence_b_start=3, html_action="return")
    _, doc, _ = unpack(fig.data, tmp_path)
    assert doc["model_type"] == "roberta" and doc["sentence_b_start"] == 3
    assert doc["rows"][0]["attention"]["encoder_self"]["key_kinds"] == ["special", "word", "word", "word", "word"]


def test_view_displays_through_ipython_and_returns_nothing(monkeypatch):
    shown = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    assert headmap.show(softmax_attention(), words(5)) is None
    assert len(shown) == 1 and '<div class="headmap-figure">' in shown[0].data


def test_view_without_ipython_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "IPython", None)  # import IPython now fails
    monkeypatch.setitem(sys.modules, "IPython.display", None)
    with pytest.raises(ImportError, match="pip install ipython.*html_action='return'"):
        headmap.show(softmax_attention(), words(5))


def test_return_gives_a_figure_that_displays_itself_as_bertviz_return_value_does():
    fig = headmap.show(softmax_attention(), words(5), html_action="return")
    assert isinstance(fig, headmap.Figure)
    assert fig._repr_html_() == fig.data and fig.data.startswith('<div class="headmap-figure">')
    assert fig.data is fig.data, "the HTML is built once"


def test_a_figure_prints_as_its_places_and_settings_not_its_weights():
    fig = headmap.show(softmax_attention(12, 12, 64), words(64), view="lines", head=3, html_action="return")
    assert repr(fig) == "<headmap.Figure encoder_self (12, 12, 64, 64); view='lines' layer='0' head='3'>"


def test_tokens_the_mask_hid_are_marked_pad(tmp_path):
    w = softmax_attention(2, 2, 5)
    w[..., 4] = 0  # no query attends to the last token: a PAD key, hidden by the padding mask
    w /= w.sum(-1, keepdims=True)
    w[:, :, 3] = 0  # and query 3 saw nothing: fully masked
    _, doc, _ = unpack(headmap.show(w, ["[CLS]", "a", "b", "[SEP]", "[PAD]"], html_action="return").data, tmp_path)
    place = doc["rows"][0]["attention"]["encoder_self"]
    assert place["key_valid"] == [True, True, True, True, False]
    assert place["query_valid"] == [True, True, True, False, False], "a PAD key is a PAD query in self-attention"
    assert place["query_kinds"] == ["special", "word", "word", "pad", "pad"]


def test_in_cross_attention_the_two_sides_are_read_apart(tmp_path):
    w = softmax_attention(1, 1, 2, 3)
    w[..., 2] = 0
    w /= w.sum(-1, keepdims=True)
    fig = headmap.show(w, ["x", "y"], key_tokens=["a", "b", "<pad>"], place="cross", html_action="return")
    cross = unpack(fig.data, tmp_path)[1]["rows"][0]["attention"]["cross"]
    assert (cross["query_valid"], cross["key_valid"]) == ([True, True], [True, True, False])
