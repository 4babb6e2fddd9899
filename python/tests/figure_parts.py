"""Reads a figure's HTML back the way a browser and the widget would: its tags, its inline
scripts, and the weights inside the data script (base64 → zlib → safetensors)."""

import base64
import json
import zlib
from html.parser import HTMLParser

from safetensors import safe_open
from safetensors.numpy import load

DATA_TYPE = "application/vnd.headmap+safetensors"


class Parts(HTMLParser):
    """Every start tag with its attributes, and each <script>'s attributes and text."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tags, self.scripts, self._script = [], [], None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script = {"attrs": dict(attrs), "text": ""}

    def handle_data(self, data):
        if self._script is not None:
            self._script["text"] += data

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.scripts.append(self._script)
            self._script = None

    def element(self, name="attention-heatmap"):
        found = [attrs for tag, attrs in self.tags if tag == name]
        assert len(found) == 1, f"expected one <{name}>, found {len(found)}"
        return found[0]

    def data_script(self):
        found = [s for s in self.scripts if s["attrs"].get("type") == DATA_TYPE]
        assert len(found) == 1, f"expected one data script, found {len(found)}"
        return found[0]


def unpack(html, tmp_path):
    """(tensors by name, the headmap document, the safetensors header) from a figure's HTML,
    read with the safetensors package, not with headmap's writer."""
    script = Parts(html).data_script()
    assert script["attrs"]["data-encoding"] == "deflate;base64"
    raw = zlib.decompress(base64.b64decode(script["text"], validate=True))
    tensors = load(raw)
    path = tmp_path / "figure.safetensors"
    path.write_bytes(raw)
    with safe_open(str(path), framework="numpy") as f:
        metadata = f.metadata()
    assert set(metadata) == {"headmap"}, metadata
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + n])
    return tensors, json.loads(metadata["headmap"]), header
