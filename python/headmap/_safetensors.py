"""A safetensors writer in NumPy, so the package needs no other dependency. The layout, from
the format's README: an 8-byte little-endian header length N, N bytes of JSON (padded with
spaces to a multiple of 8, so the data that follows is aligned), then each tensor's raw
little-endian bytes, back to back in the order of their data_offsets."""

from __future__ import annotations

import json
import struct

import numpy as np

DTYPES = {np.dtype("<f2"): "F16", np.dtype("<f4"): "F32"}


def encode(tensors: dict[str, np.ndarray], metadata: dict[str, str]) -> bytes:
    """The bytes of a safetensors file holding `tensors` (written in the dict's order) and the
    string-to-string `metadata` under `__metadata__`."""
    header: dict[str, object] = {"__metadata__": metadata}
    blobs = []
    offset = 0
    for name, array in tensors.items():
        dtype = array.dtype.newbyteorder("<")
        if dtype not in DTYPES:
            raise TypeError(f"tensor `{name}` has dtype {array.dtype}; this writer knows {sorted(DTYPES.values())}")
        blob = np.ascontiguousarray(array, dtype=dtype).tobytes()  # C order, little-endian
        header[name] = {"dtype": DTYPES[dtype], "shape": list(array.shape), "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    # ASCII JSON: any token (even a lone surrogate from a broken tokenizer) survives as \u escapes
    text = json.dumps(header, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    text += b" " * (-len(text) % 8)
    return b"".join([struct.pack("<Q", len(text)), text, *blobs])
