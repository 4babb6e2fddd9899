"""A figure: the weights of each place with their tokens, and how the widget first shows them.
Its HTML is the contract with the widget's inline script:

    <div class="headmap-figure">
      <attention-heatmap view=… layer=… head=… place=…></attention-heatmap>
      <script type="application/vnd.headmap+safetensors" data-encoding="deflate;base64">…</script>
      <script>…dist/headmap-inline.js…</script>
    </div>

The data script is a safetensors file (tensor `rows.0.<place>`, (L, H, Tq, Tk), F16 unless
asked F32; `__metadata__.headmap` the JSON document below), zlib-compressed and base64-encoded.
"""

from __future__ import annotations

import base64
import html
import json
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import _page, _safetensors, _widget
from ._half import to_half

PLACES = ("encoder_self", "decoder_self", "cross")
MASKS = ("padding", "causal", "cross", "none")
PRECISIONS = ("f16", "f32")
# on f16 softmax weights level 1 packs within 1% of level 6 (to ~85%) in half the time
COMPRESSION_LEVEL = 1
DATA_TYPE = "application/vnd.headmap+safetensors"


@dataclass
class Place:
    """One place's weights (L, H, Tq, Tk) and what its rows and columns are."""

    weights: np.ndarray  # (L, H, Tq, Tk) float32, checked
    mask: str
    queries: list[str]
    keys: list[str]
    query_valid: list[bool]  # false at PAD
    key_valid: list[bool]
    query_kinds: list[str]
    key_kinds: list[str]

    def document(self) -> dict:
        return {
            "mask": self.mask,
            "what_if": False,  # the weights are the model's own: no mask was swapped
            "queries": self.queries,
            "keys": self.keys,
            "query_valid": self.query_valid,
            "key_valid": self.key_valid,
            "query_kinds": self.query_kinds,
            "key_kinds": self.key_kinds,
        }


@dataclass
class Figure:
    """What headmap.show(..., html_action="return") gives: displays itself in a notebook
    (`_repr_html_`, and `.data`, the HTML text, as BertViz's return value has) and saves
    itself as one self-contained page (`.save(path)`)."""

    places: dict[str, Place]
    attributes: dict[str, str]  # the element's attributes, in the order written
    model_type: str = "unknown"
    precision: str = "f16"
    sentence_b_start: int | None = None
    _html: str | None = field(default=None, repr=False, compare=False)

    def document(self) -> dict:
        """The `headmap` metadata: everything but the weights."""
        doc = {
            "format": "headmap.attention",
            "version": 1,
            "model_type": self.model_type,
            "rows": [{"attention": {name: place.document() for name, place in self.places.items()}}],
        }
        if self.sentence_b_start is not None:
            doc["sentence_b_start"] = self.sentence_b_start
        return doc

    def safetensors(self) -> bytes:
        """The weights as a safetensors file, before compression."""
        cast = to_half if self.precision == "f16" else (lambda w: w.astype("<f4"))
        tensors = {f"rows.0.{name}": cast(place.weights) for name, place in self.places.items()}
        metadata = {"headmap": json.dumps(self.document(), ensure_ascii=False, separators=(",", ":"))}
        return _safetensors.encode(tensors, metadata)

    @property
    def data(self) -> str:
        """The figure's HTML fragment (built once: the weights do not change)."""
        if self._html is None:
            packed = base64.b64encode(zlib.compress(self.safetensors(), COMPRESSION_LEVEL)).decode("ascii")
            attrs = "".join(f' {name}="{html.escape(value)}"' for name, value in self.attributes.items())
            self._html = (
                '<div class="headmap-figure">\n'
                f"<attention-heatmap{attrs}></attention-heatmap>\n"
                f'<script type="{DATA_TYPE}" data-encoding="deflate;base64">{packed}</script>\n'
                f"<script>{_widget.script()}</script>\n"
                "</div>"
            )
        return self._html

    def __repr__(self) -> str:  # the weights would flood a console
        places = ", ".join(f"{name} {tuple(p.weights.shape)}" for name, p in self.places.items())
        shown = " ".join(f"{k}={v!r}" for k, v in self.attributes.items() if k != "place")
        return f"<headmap.Figure {places}; {shown}>"

    def _repr_html_(self) -> str:
        return self.data

    def page(self, title: str = "headmap: attention") -> str:
        """A whole HTML page of this figure, under a strict Content-Security-Policy."""
        return _page.page(self.data, [_widget.script()], title=title, lang=self.attributes.get("lang", "en"))

    def save(self, path: str | os.PathLike) -> Path:
        """Writes the page to `path` (one file: no network, no CDN) and returns the path; a path
        ending in .safetensors gets the weights alone, the file the widget's `src` and the
        explorer open (docs/attention.schema.json)."""
        path = Path(path)
        if path.suffix == ".safetensors":
            path.write_bytes(self.safetensors())
            return path
        path.write_bytes(self.page().encode("utf-8"))  # bytes: no CR LF on Windows, the hash stays true
        return path
