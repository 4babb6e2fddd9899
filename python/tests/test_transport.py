"""The weights travel as f16 bytes in a safetensors file, zlib-compressed and base64-encoded:
headmap's own writer read back by the safetensors package, and nothing sent twice."""

import base64
import json
import re
import zlib

import numpy as np
import pytest
from safetensors.numpy import load

import headmap
from headmap import _safetensors
from figure_parts import Parts, unpack
from synthetic import softmax_attention, words


def test_f16_weights_come_back_within_f16_rounding(tmp_path):
    w = softmax_attention(3, 4, 9, seed=3)
    tensors, _, header = unpack(headmap.show(w, words(9), html_action="return").data, tmp_path)
    got = tensors["rows.0.encoder_self"]
    assert got.dtype == np.float16 and got.shape == (3, 4, 9, 9) and got.flags.c_contiguous
    assert header["rows.0.encoder_self"]["dtype"] == "F16"
    # round to nearest: each weight within half a unit in the last place of f16 (2^-11 relative)
    np.testing.assert_allclose(got.astype(np.float32), w, rtol=2.0**-11, atol=2.0**-25, err_msg="rows.0.encoder_self")
    np.testing.assert_array_equal(got, w.astype(np.float16))


def test_f32_precision_is_exact_when_asked(tmp_path):
    w = softmax_attention(2, 2, 5)
    tensors, _, header = unpack(headmap.show(w, words(5), precision="f32", html_action="return").data, tmp_path)
    assert header["rows.0.encoder_self"]["dtype"] == "F32"
    np.testing.assert_array_equal(tensors["rows.0.encoder_self"], w)


def test_the_weights_are_bytes_not_json_numbers(tmp_path):
    w = softmax_attention(2, 3, 40)
    html = headmap.show(w, words(40), html_action="return").data
    _, doc, _ = unpack(html, tmp_path)
    assert "weights" not in doc["rows"][0]["attention"]["encoder_self"], "the document carries no weights"
    parts = Parts(html)
    outside = html.replace(parts.data_script()["text"], "")
    assert not re.search(r"0\.\d{3}", outside), "no decimal numbers outside the compressed data"
    packed = parts.data_script()["text"]
    assert re.fullmatch(r"[A-Za-z0-9+/]+=*", packed), "base64 without line breaks"
    raw = zlib.decompress(base64.b64decode(packed))
    assert len(raw) < w.size * 2 + 4096, "two bytes a weight, plus the header"
    assert zlib.decompressobj(wbits=15).decompress(base64.b64decode(packed)) == raw, "zlib format with its header, as DecompressionStream('deflate') reads"


def test_the_writer_matches_the_safetensors_reader_for_every_dtype_and_order():
    rng = np.random.default_rng(1)
    tensors = {
        "rows.0.encoder_self": rng.random((2, 3, 4, 4)).astype("<f2"),
        "rows.0.decoder_self": rng.random((1, 1, 1, 1)).astype("<f4"),
        "rows.1.cross": rng.random((2, 1, 3, 5)).astype(">f4"),  # big-endian in, little-endian out
    }
    raw = _safetensors.encode(tensors, {"headmap": '{"k": "값"}'})
    n = int.from_bytes(raw[:8], "little")
    assert n % 8 == 0 and raw[8:9] == b"{" and raw[8 + n - 1:8 + n] in (b"}", b" ")
    header = json.loads(raw[8:8 + n])
    starts = [header[name]["data_offsets"][0] for name in tensors]
    assert starts == sorted(starts) and starts[0] == 0, "written in the order given"
    back = load(raw)
    assert set(back) == set(tensors)
    for name, array in tensors.items():
        np.testing.assert_array_equal(back[name], array, err_msg=name)
        assert back[name].dtype == array.dtype.newbyteorder("<"), name
    assert len(raw) == 8 + n + sum(a.nbytes for a in tensors.values()), "no holes, nothing extra"


def test_an_unknown_dtype_is_refused_by_name():
    with pytest.raises(TypeError, match="tensor `x` has dtype float64"):
        _safetensors.encode({"x": np.zeros((1,), dtype=np.float64)}, {})


def test_tokens_in_any_script_and_odd_characters_survive(tmp_path):
    tokens = ["동물이", "it's", '"q"', "<b>", "a&b", "\u2028", "😀"]
    tensors, doc, _ = unpack(headmap.show(softmax_attention(1, 1, 7), tokens, html_action="return").data, tmp_path)
    assert doc["rows"][0]["attention"]["encoder_self"]["queries"] == tokens


def test_fully_masked_rows_of_zeros_travel_as_zeros(tmp_path):
    w = softmax_attention(1, 2, 4)
    w[:, :, 3] = 0  # a padded query that may see nothing
    tensors, _, _ = unpack(headmap.show(w, words(4), html_action="return").data, tmp_path)
    assert not tensors["rows.0.encoder_self"][:, :, 3].any()
