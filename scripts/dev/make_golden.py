#!/usr/bin/env python3
"""Writes tests/fixtures/attention_golden.json: attention computed by PyTorch, for the Rust and
wasm tests to match to 1e-5.

Not run in CI (PyTorch is large); run it by hand after `pip install torch` and commit the
output. Two independent references:

- scaled dot-product attention: torch.nn.functional.scaled_dot_product_attention. It returns
  only the output, so the weights come from a second call with V = I (weights · I = weights).
- multi-head attention: torch.nn.MultiheadAttention with need_weights=True and
  average_attn_weights=False, for per-head weights and the output after W_O.

Inputs are float32 values; the reference is computed in float64.
"""

import json
import pathlib

import torch
import torch.nn.functional as F

OUT = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "attention_golden.json"
gen = torch.Generator().manual_seed(20261130)


def rand(*shape, scale=1.0):
    # float32 values, so Rust reads exactly the numbers PyTorch used
    return (torch.randn(*shape, generator=gen) * scale).float().double()


def allowed(kind, tq, tk, key_valid):
    """True where a query may see a key (headmap's convention)."""
    a = torch.ones(tq, tk, dtype=torch.bool)
    if kind in ("causal", "causal+padding"):
        a &= torch.tril(torch.ones(tq, tk, dtype=torch.bool))
    if key_valid is not None:
        a &= torch.tensor(key_valid, dtype=torch.bool)[None, :]
    return a


def sdpa_case(name, kind, tq, tk, d_k, d_v, key_valid=None, scale=True, spread=1.0):
    q, k, v = rand(tq, d_k, scale=spread), rand(tk, d_k, scale=spread), rand(tk, d_v)
    mask = allowed(kind, tq, tk, key_valid)
    s = None if scale else 1.0
    out = F.scaled_dot_product_attention(q[None], k[None], v[None], attn_mask=mask[None], scale=s)[0]
    eye = torch.eye(tk, dtype=torch.float64)
    weights = F.scaled_dot_product_attention(q[None], k[None], eye[None], attn_mask=mask[None], scale=s)[0]
    return {
        "name": name,
        "mask": kind,
        "key_valid": key_valid,
        "scale": scale,
        "q": q.tolist(),
        "k": k.tolist(),
        "v": v.tolist(),
        "weights": weights.tolist(),
        "output": out.tolist(),
    }


def mha_case(name, kind, tq, tk, d_model, heads, key_valid=None):
    mha = torch.nn.MultiheadAttention(d_model, heads, bias=True, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for p in mha.parameters():
            p.copy_(rand(*p.shape, scale=0.4))
    x_q = rand(tq, d_model)
    x_kv = x_q if kind in ("none", "padding", "causal", "causal+padding") else rand(tk, d_model)
    attn_mask = None
    if kind in ("causal", "causal+padding"):
        attn_mask = ~torch.tril(torch.ones(tq, tk, dtype=torch.bool))  # True = hidden, PyTorch's way
    kpm = None if key_valid is None else ~torch.tensor(key_valid, dtype=torch.bool)[None, :]
    with torch.no_grad():
        out, weights = mha(
            x_q[None], x_kv[None], x_kv[None],
            attn_mask=attn_mask, key_padding_mask=kpm, need_weights=True, average_attn_weights=False,
        )
    d = d_model
    w_in, b_in = mha.in_proj_weight.detach(), mha.in_proj_bias.detach()
    # headmap's Linear is y = x W + b with W (d_in, d_out): the transpose of PyTorch's weight.
    return {
        "name": name,
        "mask": kind,
        "key_valid": key_valid,
        "heads": heads,
        "w_q": w_in[:d].T.tolist(),
        "b_q": b_in[:d].tolist(),
        "w_k": w_in[d : 2 * d].T.tolist(),
        "b_k": b_in[d : 2 * d].tolist(),
        "w_v": w_in[2 * d :].T.tolist(),
        "b_v": b_in[2 * d :].tolist(),
        "w_o": mha.out_proj.weight.detach().T.tolist(),
        "b_o": mha.out_proj.bias.detach().tolist(),
        "x_q": x_q.tolist(),
        "x_kv": x_kv.tolist(),
        "weights": weights[0].tolist(),
        "output": out[0].tolist(),
    }


def main():
    fixture = {
        "source": f"torch {torch.__version__}, scripts/dev/make_golden.py",
        "sdpa": [
            sdpa_case("no mask", "none", 4, 4, 8, 6),
            sdpa_case("encoder padding", "padding", 5, 5, 8, 6, key_valid=[True, True, True, False, False]),
            sdpa_case("decoder causal", "causal", 5, 5, 8, 6),
            sdpa_case("causal + padding", "causal+padding", 5, 5, 8, 6, key_valid=[True, True, True, True, False]),
            sdpa_case("cross, source padded", "cross", 3, 6, 8, 5, key_valid=[True, True, True, True, False, False]),
            sdpa_case("scaling off, wide keys", "none", 4, 6, 64, 4, scale=False, spread=0.5),
            sdpa_case("scaling on, wide keys", "none", 4, 6, 64, 4, scale=True, spread=0.5),
        ],
        "mha": [
            mha_case("self, no mask", "none", 5, 5, 16, 4),
            mha_case("self, padding", "padding", 6, 6, 16, 4, key_valid=[True] * 4 + [False] * 2),
            mha_case("self, causal", "causal", 5, 5, 16, 4),
            mha_case("self, causal + padding", "causal+padding", 5, 5, 16, 2, key_valid=[True] * 4 + [False]),
            mha_case("cross, source padded", "cross", 4, 6, 16, 4, key_valid=[True] * 5 + [False]),
            mha_case("eight heads of width 4", "none", 3, 3, 32, 8),
        ],
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(fixture, separators=(",", ":")) + "\n")
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
