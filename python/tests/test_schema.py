"""Every document headmap writes is valid against the format's schema, docs/attention.schema.json,
which the widget's reader and the command line follow too."""

import json
from pathlib import Path

import jsonschema
import pytest

import headmap
from figure_parts import unpack
from synthetic import softmax_attention, words

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "docs" / "attention.schema.json").read_text(encoding="utf-8"))


def figures():
    enc = softmax_attention(2, 2, 4)
    dec = softmax_attention(2, 2, 3, causal=True)
    cross = softmax_attention(2, 2, 3, 4)
    yield "show", headmap.show(enc, ["[CLS]", "a", "##b", "[SEP]"], model_type="bert", sentence_b_start=2, html_action="return")
    yield "show, decoder", headmap.show(dec, ["<|endoftext|>", "x", "y"], html_action="return")
    yield "head_view, encoder-decoder", headmap.head_view(
        encoder_attention=tuple(enc[:, None]), decoder_attention=tuple(dec[:, None]), cross_attention=tuple(cross[:, None]),
        encoder_tokens=["▁a", "▁b", "[UNK]", "</s>"], decoder_tokens=words(3), html_action="return")


@pytest.mark.parametrize("label, figure", list(figures()), ids=lambda x: x if isinstance(x, str) else "")
def test_the_document_follows_the_schema(label, figure, tmp_path):
    _, doc, _ = unpack(figure.data, tmp_path)
    jsonschema.validate(doc, SCHEMA)
