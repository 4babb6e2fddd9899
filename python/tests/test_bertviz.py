"""head_view and model_view take BertViz's arguments and mean what BertViz means by them."""

import numpy as np
import pytest

import headmap
from figure_parts import Parts, unpack
from synthetic import softmax_attention, words


def outputs_attentions(layers=4, heads=3, t=5, causal=False, tk=None):
    """As transformers returns them: a tuple of (batch=1, H, Tq, Tk) per layer."""
    w = softmax_attention(layers, heads, t, tk, causal=causal)
    return tuple(w[i][None] for i in range(layers)), w


def test_head_view_is_the_lines_view_of_the_self_attention(tmp_path):
    attention, w = outputs_attentions()
    fig = headmap.head_view(attention, words(5), html_action="return")
    assert Parts(fig.data).element() == {"view": "lines", "place": "encoder_self", "layer": "0", "head": "0"}
    tensors, _, _ = unpack(fig.data, tmp_path)
    np.testing.assert_array_equal(tensors["rows.0.encoder_self"], w.astype(np.float16))


def test_include_layers_keeps_those_layers_and_layer_counts_in_the_model(tmp_path):
    attention, w = outputs_attentions(layers=6)
    fig = headmap.head_view(attention, words(5), include_layers=[2, 4, 5], layer=4, heads=[2, 0], html_action="return")
    tensors, _, _ = unpack(fig.data, tmp_path)
    np.testing.assert_array_equal(tensors["rows.0.encoder_self"], w[[2, 4, 5]].astype(np.float16))
    element = Parts(fig.data).element()
    assert (element["layer"], element["head"]) == ("1", "2"), "layer 4 is the second kept; the first of heads is shown"
    sliced = headmap.head_view(attention, words(5), include_layers=slice(3, None), html_action="return")
    np.testing.assert_array_equal(unpack(sliced.data, tmp_path)[0]["rows.0.encoder_self"], w[3:].astype(np.float16))
    with pytest.raises(ValueError, match=r"layer=1 is not among the layers kept \(include_layers: \[2, 4, 5\]\)"):
        headmap.head_view(attention, words(5), include_layers=[2, 4, 5], layer=1)
    with pytest.raises(ValueError, match="include_layers holds 6, out of range: the model has 6 layers"):
        headmap.head_view(attention, words(5), include_layers=[0, 6])


def test_prettify_tokens_cleans_labels_as_bertviz_and_kinds_read_the_raw_pieces(tmp_path):
    tokens = ["<s>", "ĠThe", "Ġcat", "▁sat", "play", "##ing", "end</w>"]
    attention, _ = outputs_attentions(t=7)
    _, doc, _ = unpack(headmap.head_view(attention, tokens, html_action="return").data, tmp_path)
    place = doc["rows"][0]["attention"]["encoder_self"]
    assert place["queries"] == ["<s>", " The", " cat", " sat", "play", "##ing", "end"]
    assert place["query_kinds"] == ["special", "word", "word", "word", "word", "continuation", "word"]
    _, raw, _ = unpack(headmap.head_view(attention, tokens, prettify_tokens=False, html_action="return").data, tmp_path)
    assert raw["rows"][0]["attention"]["encoder_self"]["keys"] == tokens


def test_sentence_b_start_is_kept_for_the_widget(tmp_path):
    attention, _ = outputs_attentions(t=6)
    tokens = ["[CLS]", "a", "[SEP]", "b", "c", "[SEP]"]
    _, doc, _ = unpack(headmap.head_view(attention, tokens, sentence_b_start=3, html_action="return").data, tmp_path)
    assert doc["sentence_b_start"] == 3
    with pytest.raises(ValueError, match="sentence_b_start=7 is out of range: 0 to 6"):
        headmap.head_view(attention, tokens, sentence_b_start=7)


def encoder_decoder():
    enc, _ = outputs_attentions(layers=2, heads=2, t=4)
    dec, _ = outputs_attentions(layers=2, heads=2, t=3, causal=True)
    cross, _ = outputs_attentions(layers=2, heads=2, t=3, tk=4)
    return dict(encoder_attention=enc, decoder_attention=dec, cross_attention=cross,
                encoder_tokens=["▁Das", "▁Haus", "▁ist", "</s>"], decoder_tokens=["<pad>", "▁The", "▁house"])


def test_encoder_decoder_attention_gives_the_three_places_in_one_figure(tmp_path):
    fig = headmap.head_view(**encoder_decoder(), html_action="return")
    tensors, doc, header = unpack(fig.data, tmp_path)
    places = doc["rows"][0]["attention"]
    assert list(places) == ["encoder_self", "decoder_self", "cross"]
    assert {name: p["mask"] for name, p in places.items()} == {"encoder_self": "padding", "decoder_self": "causal", "cross": "cross"}
    assert places["encoder_self"]["queries"] == places["encoder_self"]["keys"] == [" Das", " Haus", " ist", "</s>"]
    assert places["decoder_self"]["keys"] == ["<pad>", " The", " house"]
    assert places["cross"]["queries"] == places["decoder_self"]["queries"]
    assert places["cross"]["keys"] == places["encoder_self"]["keys"]
    assert {name: t.shape for name, t in tensors.items()} == {
        "rows.0.encoder_self": (2, 2, 4, 4), "rows.0.decoder_self": (2, 2, 3, 3), "rows.0.cross": (2, 2, 3, 4)}
    offsets = [header[f"rows.0.{p}"]["data_offsets"] for p in places]
    assert offsets == sorted(offsets) and offsets[0][0] == 0, "tensors lie in the order of their offsets"
    assert Parts(fig.data).element()["place"] == "encoder_self", "BertViz shows the encoder first"


def test_one_place_of_an_encoder_decoder_alone(tmp_path):
    args = encoder_decoder()
    fig = headmap.head_view(cross_attention=args["cross_attention"], encoder_tokens=args["encoder_tokens"],
                            decoder_tokens=args["decoder_tokens"], html_action="return")
    assert Parts(fig.data).element()["place"] == "cross"


@pytest.mark.parametrize("drop, message", [
    ("encoder_tokens", "'encoder_tokens' required with encoder_attention="),
    ("decoder_tokens", "'decoder_tokens' required with decoder_attention="),
])
def test_an_encoder_decoder_without_its_tokens_is_refused(drop, message):
    args = encoder_decoder()
    del args[drop]
    with pytest.raises(ValueError, match=message):
        headmap.head_view(**args)


def test_self_and_encoder_decoder_arguments_do_not_mix():
    attention, _ = outputs_attentions()
    with pytest.raises(ValueError, match="give one or the other"):
        headmap.head_view(attention, words(5), encoder_tokens=words(5))
    with pytest.raises(ValueError, match="'tokens' is required"):
        headmap.head_view(attention)
    with pytest.raises(ValueError, match="give attention= with tokens="):
        headmap.head_view()


def test_model_view_is_the_grid_of_every_head(tmp_path):
    attention, w = outputs_attentions(layers=4, heads=6)
    fig = headmap.model_view(attention, words(5), display_mode="dark", include_layers=[1, 3], include_heads=[0, 2, 5],
                             html_action="return", layer=3)
    assert Parts(fig.data).element() == {"view": "grid", "place": "encoder_self", "layer": "1", "head": "all", "theme": "dark"}
    tensors, _, _ = unpack(fig.data, tmp_path)
    np.testing.assert_array_equal(tensors["rows.0.encoder_self"], w[[1, 3]][:, [0, 2, 5]].astype(np.float16))


def test_model_view_takes_bertviz_positional_order(tmp_path):
    attention, _ = outputs_attentions()
    # BertViz: model_view(attention, tokens, sentence_b_start, prettify_tokens, display_mode, …)
    fig = headmap.model_view(attention, words(5), None, True, "light", html_action="return")
    assert Parts(fig.data).element()["theme"] == "light"
    with pytest.raises(ValueError, match="display_mode='grey': expected 'light' or 'dark'"):
        headmap.model_view(attention, words(5), display_mode="grey")
