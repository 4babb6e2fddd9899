"""How long show(..., html_action="return") takes to build a big figure's HTML, and how big it
is: 12 layers × 12 heads × 512 × 512 synthetic softmax weights (BERT-base at 512 tokens).
Printed, not asserted: run by scripts/test-python after the wheel is installed."""

import base64
import statistics
import sys
import time
import zlib

import numpy as np

import headmap
from headmap import _figure


def attention(layers=12, heads=12, t=512, seed=0):
    rng = np.random.default_rng(seed)
    w = np.empty((layers, heads, t, t), dtype=np.float32)  # (L, H, Tq, Tk)
    for layer in range(layers):  # a layer at a time: the float64 scores stay small
        scores = rng.standard_normal((heads, t, t)) * 3
        e = np.exp(scores - scores.max(-1, keepdims=True))
        w[layer] = e / e.sum(-1, keepdims=True)
    return w


def main():
    w = attention()
    tokens = ["[CLS]", *(f"w{i}" for i in range(510)), "[SEP]"]
    times, size = [], 0
    for _ in range(3):
        start = time.perf_counter()
        html = headmap.show(w, tokens, html_action="return").data
        times.append(time.perf_counter() - start)
        size = len(html.encode("utf-8"))
    print(f"[speed] 12 x 12 x 512 x 512 through show(..., html_action='return').data: "
          f"min {min(times):.2f} s, median {statistics.median(times):.2f} s, max {max(times):.2f} s; "
          f"HTML {size / 1e6:.1f} MB (f16 weights {w.size * 2 / 1e6:.1f} MB raw)")
    fig = headmap.show(w, tokens, html_action="return")
    steps = {}
    start = time.perf_counter()
    raw = fig.safetensors()
    steps["check + f16 + safetensors"] = time.perf_counter() - start
    start = time.perf_counter()
    packed = zlib.compress(raw, _figure.COMPRESSION_LEVEL)
    steps[f"zlib level {_figure.COMPRESSION_LEVEL}"] = time.perf_counter() - start
    start = time.perf_counter()
    base64.b64encode(packed)
    steps["base64"] = time.perf_counter() - start
    print("[speed] where the time goes (one run): " + ", ".join(f"{k} {v:.2f} s" for k, v in steps.items())
          + f"; compressed to {len(packed) / len(raw):.0%} of the safetensors bytes")
    start = time.perf_counter()
    headmap.show(w, tokens, html_action="return")
    print(f"[speed] checking the weights alone (show without .data): {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    sys.exit(main())
