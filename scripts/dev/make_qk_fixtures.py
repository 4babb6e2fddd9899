#!/usr/bin/env python3
"""Writes tests/fixtures/qk/<name>.{safetensors,json}: every head's query and key vectors as
transformers' own attention forward hands them to QKᵀ, for headmap's test of src/qk
(tests/qk.rs), plus a NumPy reference of the joint embedding's PCA and correlations.

Not run in CI (it needs PyTorch and transformers); run by hand and commit the output:

    /work/venv/bin/python scripts/dev/make_qk_fixtures.py          # every model below
    /work/venv/bin/python scripts/dev/make_qk_fixtures.py llama t5  # only the named ones
    python3 scripts/dev/make_qk_fixtures.py --pca-only               # the references alone, from the
                                                                     # stored vectors (NumPy, safetensors)

The models are the tiny ones of tests/fixtures/hf (make_hf_fixtures.py), loaded with
AutoModel(attn_implementation="eager", dtype=float32). The output is deterministic.

How the vectors are taken. Forward hooks record the outputs of the query and key projections
(BERT query/key, GPT-2's fused c_attn, GPT-NeoX's fused query_key_value, q_proj/k_proj, T5's
q/k), split into heads as the attention forward splits them. In rotary models a pre-hook on
the attention module records the (cos, sin) the model hands it, and the modeling file's own
apply_rotary_pos_emb turns Q and K (GPT-NeoX's turns only the rotary dimensions). In
grouped-query models the modeling file's repeat_kv gives each query head its key head. The
vectors are taken before the scaling and before T5's position bias.

Input, batch 1, no padding: a fixed sentence through the folder's tokenizer.json with its
special tokens, cut to its first 7 ids and its last (T5's decoder: the start id, then
another sentence cut to 5 ids and its last).

<name>.safetensors (float32; L layers, H query heads, d = d_k):
    <place>.q        [L, H, Tq, d]
    <place>.k        [L, H, Tk, d]   the key each query head reads
    <place>.weights  [L, H, Tq, Tk]  transformers' attentions (output_attentions=True)
<name>.json:
    model            folder, relative to the repo root
    ids              the encoder's (or decoder-only model's) input ids
    decoder_ids      an encoder–decoder's decoder input ids
    divisor          {place: what QKᵀ is divided by}
    pca              [{place, layer, head, ...}] one head per place: the NumPy reference of
                     the joint embedding (FORMULAS says how), float64 from the f32 vectors
"""

import argparse
import importlib.metadata
import json
import math
import pathlib
import sys

import numpy as np

try:  # --pca-only needs neither
    import torch
    from safetensors.torch import save_file
    from tokenizers import Tokenizer
    from transformers import AutoConfig, AutoModel
except ImportError:
    torch = None

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "qk"

SENTENCE = "Queries meet keys."
TARGET = "Keys answer."
KEEP = 8  # ids of a sentence: the first KEEP - 1 and the last

NAMES = ["bert", "gpt2", "gpt_neo", "llama", "llama3", "qwen2", "mistral", "gpt_neox", "gpt_neox-odd-rotary", "t5", "bart"]

FORMULAS = (
    "One sentence, one head: Q (Nq, d) and K (Nk, d) as stored, in float64. "
    "shift = mean(Q) - mean(K); K' = K + shift; c = (mean ||K'_j||^2 / mean ||Q_i||^2) ** (1/4); "
    "P = [Q c ; K' / c] (queries first); centred = P - mean(P); U, S, Vt = np.linalg.svd(centred); "
    "coords = centred @ Vt[:2].T (each axis's sign is arbitrary); explained = S[:2]^2 / sum(S^2). "
    "correlation: for each query i with two or more keys j the mask allows (causal j <= i; a window "
    "w keeps i - j < w), Pearson's r of q_i.k_j against -||p_i - p_j||, then the mean over those "
    "queries; q.k always from Q, K; p from Q, K (before) or from Q c, K' / c (after)."
)


def cut(ids, keep):
    return ids if len(ids) <= keep else ids[: keep - 1] + ids[-1:]


def heads_of(x, heads):
    """(1, T, heads·d) → (heads, T, d), as every attention forward views its projection."""
    t = x[0]  # (T, heads·d)
    return t.view(t.shape[0], heads, -1).transpose(0, 1)


class Recorder:
    """Forward hooks that keep a module's output, and pre-hooks that keep its (cos, sin)."""

    def __init__(self):
        self.out, self.handles = {}, []

    def output(self, module, key):
        def hook(_m, _args, output):
            self.out[key] = output.detach()

        self.handles.append(module.register_forward_hook(hook))

    def rotary(self, attention, key):
        def hook(_m, _args, kwargs):
            self.out[key] = tuple(t.detach() for t in kwargs["position_embeddings"])

        self.handles.append(attention.register_forward_pre_hook(hook, with_kwargs=True))

    def close(self):
        for h in self.handles:
            h.remove()


def sites(model, cfg):
    """Per place, per layer: (how to get q and k from the recorded outputs, the attention module
    when it rotates, the module whose file has apply_rotary_pos_emb and repeat_kv)."""
    kind = cfg.model_type
    if kind == "bert":
        return {"encoder_self": [("separate", l.attention.self.query, l.attention.self.key, None) for l in model.encoder.layer]}
    if kind == "gpt2":
        return {"decoder_self": [("gpt2", b.attn.c_attn, None, None) for b in model.h]}
    if kind == "gpt_neo":
        return {"decoder_self": [("separate", b.attn.attention.q_proj, b.attn.attention.k_proj, None) for b in model.h]}
    if kind in ("llama", "qwen2", "mistral"):
        return {"decoder_self": [("separate", l.self_attn.q_proj, l.self_attn.k_proj, l.self_attn) for l in model.layers]}
    if kind == "gpt_neox":
        return {"decoder_self": [("neox", l.attention.query_key_value, None, l.attention) for l in model.layers]}
    if kind == "t5":
        return {
            "encoder_self": [("separate", b.layer[0].SelfAttention.q, b.layer[0].SelfAttention.k, None) for b in model.encoder.block],
            "decoder_self": [("separate", b.layer[0].SelfAttention.q, b.layer[0].SelfAttention.k, None) for b in model.decoder.block],
            "cross": [("separate", b.layer[1].EncDecAttention.q, b.layer[1].EncDecAttention.k, None) for b in model.decoder.block],
        }
    if kind == "bart":
        return {
            "encoder_self": [("separate", l.self_attn.q_proj, l.self_attn.k_proj, None) for l in model.encoder.layers],
            "decoder_self": [("separate", l.self_attn.q_proj, l.self_attn.k_proj, None) for l in model.decoder.layers],
            "cross": [("separate", l.encoder_attn.q_proj, l.encoder_attn.k_proj, None) for l in model.decoder.layers],
        }
    raise ValueError(f"no sites for model_type {kind}")


def head_counts(cfg):
    kind = cfg.model_type
    if kind == "t5":
        return cfg.num_heads, cfg.num_heads
    if kind == "gpt2":
        return cfg.n_head, cfg.n_head
    if kind == "gpt_neo":
        return cfg.num_heads, cfg.num_heads
    if kind == "bart":
        return cfg.encoder_attention_heads, cfg.encoder_attention_heads
    return cfg.num_attention_heads, getattr(cfg, "num_key_value_heads", None) or cfg.num_attention_heads


def divisor(cfg, d):
    """What QKᵀ is divided by: T5 folds the scale into W_Q and GPT-Neo has none."""
    return 1.0 if cfg.model_type in ("t5", "gpt_neo") else math.sqrt(d)


def vectors(layout, q_mod, k_mod, attention, rec, key, heads, kv_heads):
    """One layer's (H, Tq, d) queries and (H, Tk, d) keys from the recorded outputs."""
    if layout == "separate":
        q, k = heads_of(rec.out[key + ".q"], heads), heads_of(rec.out[key + ".k"], kv_heads)
    elif layout == "gpt2":
        q, k, _ = rec.out[key + ".q"].split(rec.out[key + ".q"].shape[-1] // 3, dim=-1)
        q, k = heads_of(q, heads), heads_of(k, heads)
    else:  # GPT-NeoX: each head's q, k and v side by side
        qkv = heads_of(rec.out[key + ".q"], heads)  # (H, T, 3·hs)
        q, k, _ = qkv.chunk(3, dim=-1)
    if attention is not None:
        modeling = sys.modules[type(attention).__module__]
        cos, sin = rec.out[key + ".rope"]
        q, k = modeling.apply_rotary_pos_emb(q[None], k[None], cos, sin)  # (1, H, T, d)
        if hasattr(modeling, "repeat_kv"):
            k = modeling.repeat_kv(k, heads // kv_heads)
        q, k = q[0], k[0]
    assert k.shape[0] == heads, f"{key}: {k.shape[0]} key heads for {heads} query heads"
    return q.contiguous(), k.contiguous()


def allowed(cfg, place, layer, tq, tk):
    """The (Tq, Tk) mask of one unpadded sentence: causal in a decoder, with the layer's window."""
    if place != "decoder_self":
        return np.ones((tq, tk), dtype=bool)
    i, j = np.arange(tq)[:, None], np.arange(tk)[None, :]
    mask = j <= i
    window = None
    if cfg.model_type == "gpt_neo" and cfg.attention_layers[layer] == "local":
        window = cfg.window_size
    elif cfg.model_type == "mistral" and cfg.sliding_window is not None:
        window = cfg.sliding_window
    if window is not None:
        mask &= i - j < window
    return mask


def correlation(q, k, points_q, points_k, mask):
    """Per query with two or more keys, Pearson's r of q·k (the model's vectors) against
    −‖p_q − p_k‖ (the drawn points), then the mean over those queries."""
    rs = []
    for i in range(mask.shape[0]):
        keys = np.nonzero(mask[i])[0]
        if len(keys) < 2:
            continue
        dot = np.array([q[i] @ k[j] for j in keys])
        dist = -np.array([np.linalg.norm(points_q[i] - points_k[j]) for j in keys])
        if dot.std() > 0 and dist.std() > 0:
            rs.append(np.corrcoef(dot, dist)[0, 1])
    return float(np.mean(rs))


def pca_reference(q, k, mask):
    """The joint embedding of one head's queries and keys and its first two principal axes."""
    q, k = np.asarray(q, dtype=np.float64), np.asarray(k, dtype=np.float64)
    shift = q.mean(axis=0) - k.mean(axis=0)
    k_shifted = k + shift
    c = ((k_shifted**2).sum(axis=1).mean() / (q**2).sum(axis=1).mean()) ** 0.25
    qn, kn = q * c, k_shifted / c
    points = np.vstack([qn, kn])  # (Nq + Nk, d)
    centred = points - points.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    variance = s**2
    return {
        "scale": c,
        "shift": shift.tolist(),
        "coords": (centred @ vt[:2].T).tolist(),
        "explained": (variance[:2] / variance.sum()).tolist(),
        # how far apart the variances are: a near tie would let an axis turn
        "variances": variance[:3].tolist(),
        "correlation": [correlation(q, k, q, k, mask), correlation(q, k, qn, kn, mask)],
    }


def make(name):
    folder = ROOT / "tests" / "fixtures" / "hf" / name
    cfg = AutoConfig.from_pretrained(folder)
    model = AutoModel.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    ids = cut(tok.encode(SENTENCE).ids, KEEP)
    encoder_decoder = cfg.is_encoder_decoder
    decoder_ids = [cfg.decoder_start_token_id] + cut(tok.encode(TARGET).ids, KEEP - 2) if encoder_decoder else None

    heads, kv_heads = head_counts(cfg)
    places = sites(model, cfg)
    rec = Recorder()
    for place, layers in places.items():
        for n, (_, q_mod, k_mod, attention) in enumerate(layers):
            rec.output(q_mod, f"{place}.{n}.q")
            if k_mod is not None:
                rec.output(k_mod, f"{place}.{n}.k")
            if attention is not None:
                rec.rotary(attention, f"{place}.{n}.rope")
    with torch.no_grad():
        if encoder_decoder:
            out = model(input_ids=torch.tensor([ids]), decoder_input_ids=torch.tensor([decoder_ids]), output_attentions=True)
            attentions = {"encoder_self": out.encoder_attentions, "decoder_self": out.decoder_attentions, "cross": out.cross_attentions}
        else:
            out = model(input_ids=torch.tensor([ids]), output_attentions=True)
            attentions = {next(iter(places)): out.attentions}
    rec.close()

    tensors, divisors, pcas = {}, {}, []
    for place, layers in places.items():
        qs, ks = zip(*(vectors(layout, qm, km, att, rec, f"{place}.{n}", heads, kv_heads) for n, (layout, qm, km, att) in enumerate(layers)))
        q, k = torch.stack(qs), torch.stack(ks)  # (L, H, Tq, d), (L, H, Tk, d)
        weights = torch.stack([a[0] for a in attentions[place]])  # (L, H, Tq, Tk)
        d = q.shape[-1]
        divisors[place] = divisor(cfg, d)
        tensors.update({f"{place}.q": q, f"{place}.k": k, f"{place}.weights": weights})
        tq, tk = q.shape[2], k.shape[2]
        for layer in range(q.shape[0]):
            mask = allowed(cfg, place, layer, tq, tk)
            got = (weights[layer] > 0).numpy()  # (H, Tq, Tk)
            assert (got == mask[None]).all(), f"{name} {place} layer {layer}: the mask assumed here is not transformers'"
        layer, head = q.shape[0] - 1, q.shape[1] - 1
        pcas.append({"place": place, "layer": layer, "head": head, **pca_reference(q[layer, head].double().numpy(), k[layer, head].double().numpy(), allowed(cfg, place, layer, tq, tk))})

    OUT.mkdir(parents=True, exist_ok=True)
    save_file({key: t.contiguous().to(torch.float32) for key, t in tensors.items()}, OUT / f"{name}.safetensors")
    doc = {
        "model": f"tests/fixtures/hf/{name}",
        "transformers": importlib.metadata.version("transformers"),
        "ids": ids,
        **({"decoder_ids": decoder_ids} if encoder_decoder else {}),
        "divisor": divisors,
        "formulas": FORMULAS,
        "pca": pcas,
    }
    (OUT / f"{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
    size = sum((OUT / f"{name}.{ext}").stat().st_size for ext in ("safetensors", "json"))
    print(f"wrote tests/fixtures/qk/{name}.* ({size} bytes; places {', '.join(places)}; H {heads}, kv {kv_heads})")
    for p in pcas:
        v = p["variances"]
        print(f"  pca {p['place']} layer {p['layer']} head {p['head']}: variances {v[0]:.4g} {v[1]:.4g} {v[2]:.4g}, r {p['correlation'][0]:.4f} → {p['correlation'][1]:.4f}")


def remake_pca(name):
    """The PCA references of <name>.json again, from the vectors and weights stored beside it
    (the mask: where transformers' weights are not 0, as make() checks it is)."""
    from safetensors.numpy import load_file

    tensors = load_file(OUT / f"{name}.safetensors")
    path = OUT / f"{name}.json"
    doc = json.loads(path.read_text())
    for p in doc["pca"]:
        place, layer, head = p["place"], p["layer"], p["head"]
        mask = tensors[f"{place}.weights"][layer, head] > 0
        p.update(pca_reference(tensors[f"{place}.q"][layer, head], tensors[f"{place}.k"][layer, head], mask))
    doc["formulas"] = FORMULAS
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"rewrote the pca of tests/fixtures/qk/{name}.json")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"fixture folders to (re)make; default all of {NAMES}")
    parser.add_argument("--pca-only", action="store_true", help="recompute only the PCA references, from the stored vectors")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in NAMES]
    if unknown:
        sys.exit(f"unknown {unknown}; known: {NAMES}")
    if args.pca_only:
        for name in args.names or NAMES:
            remake_pca(name)
        return
    if torch is None:
        sys.exit("making the fixtures needs torch, safetensors, tokenizers and transformers")
    torch.set_num_threads(1)
    for name in args.names or NAMES:
        make(name)


if __name__ == "__main__":
    main()
