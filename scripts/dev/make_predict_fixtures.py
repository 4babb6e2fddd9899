#!/usr/bin/env python3
"""Writes what transformers predicts with the tiny models of tests/fixtures/hf/ and with
www/models/headmap-tiny-induction, for headmap's prediction, logit-lens, ablation and patching
parity tests (tests/predict_parity.rs).

Not run in CI (it needs PyTorch and transformers); run by hand and commit the output:

    pip install torch transformers safetensors
    python3 scripts/dev/make_predict_fixtures.py

Per fixture with an output head, `predict.safetensors` beside its reference files, for the
first case of its reference.json (one row, no padding):
  probs     (T, V)     softmax of the logits at every position the model predicts at (the
                       decoder's inputs for an encoder-decoder, teacher-forced)
  lens      (L, T, V)  softmax(head(final_norm(residual after layer l))), the residual taken
                       with a forward hook on each block
  ablated   (T, V)     the probabilities with heads ABLATED zeroed by a forward pre-hook on the
                       attention's output projection (the head's slice of its input set to 0)
and `predict.json` naming the heads. For the induction model, `patch.json`: a hook-based
activation patching of every head (TransformerLens's get_act_patch_attn_head_out_all_pos).
"""

import json
import pathlib

import torch
from safetensors.torch import save_file
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM, AutoModelForSeq2SeqLM

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "hf"
INDUCTION = ROOT / "www" / "models" / "headmap-tiny-induction"

# family: (task class, the blocks of the stack that ends the model, each block's output projection
# of self-attention, the final norm, the head as a function of a hidden state)
CAUSAL = ["gpt2", "gpt_neo", "gpt_neox", "llama", "llama3", "mistral", "qwen2"]
MASKED = ["roberta", "distilbert"]
SEQ2SEQ = ["bart", "marian", "t5", "t5-v1_1"]


def parts(name, model):
    """The blocks, each block's output projection, and logits(residual) for the lens."""
    t = model.config.model_type
    if t == "gpt2":
        m = model.transformer
        return m.h, [b.attn.c_proj for b in m.h], lambda r: model.lm_head(m.ln_f(r))
    if t == "gpt_neo":
        m = model.transformer
        return m.h, [b.attn.attention.out_proj for b in m.h], lambda r: model.lm_head(m.ln_f(r))
    if t == "gpt_neox":
        m = model.gpt_neox
        return m.layers, [b.attention.dense for b in m.layers], lambda r: model.get_output_embeddings()(m.final_layer_norm(r))
    if t in ("llama", "mistral", "qwen2"):
        m = model.model
        return m.layers, [b.self_attn.o_proj for b in m.layers], lambda r: model.lm_head(m.norm(r))
    if t in ("roberta", "xlm-roberta"):
        m = model.roberta
        return m.encoder.layer, [b.attention.output.dense for b in m.encoder.layer], model.lm_head
    if t == "bert":
        m = model.bert
        return m.encoder.layer, [b.attention.output.dense for b in m.encoder.layer], model.cls
    if t == "distilbert":
        layers = model.distilbert.transformer.layer

        def head(r):
            h = model.vocab_layer_norm(model.activation(model.vocab_transform(r)))
            return model.vocab_projector(h)

        return layers, [b.attention.out_lin for b in layers], head
    if t in ("bart", "marian"):
        d = model.model.decoder
        return d.layers, [b.self_attn.out_proj for b in d.layers], lambda r: model.lm_head(r) + model.final_logits_bias
    if t == "t5":
        d = model.decoder
        # transformers 5 reads tie_word_embeddings: false as "do not scale" (t5-v1_1)
        scaled = getattr(model.config, "scale_decoder_outputs", model.config.tie_word_embeddings)
        scale = model.config.d_model ** -0.5 if scaled else 1.0
        return d.block, [b.layer[0].SelfAttention.o for b in d.block], lambda r: model.lm_head(d.final_layer_norm(r) * scale)
    raise ValueError(t)


def load(folder):
    t = AutoConfig.from_pretrained(folder).model_type
    cls = AutoModelForCausalLM if t in ("gpt2", "gpt_neo", "gpt_neox", "llama", "mistral", "qwen2") else (
        AutoModelForSeq2SeqLM if t in ("bart", "marian", "t5") else AutoModelForMaskedLM)
    model = cls.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
    return model


def inputs(case, seq2seq):
    ids = torch.tensor([case["input_ids"][0]])
    if not seq2seq:
        return {"input_ids": ids}
    return {"input_ids": ids, "decoder_input_ids": torch.tensor([case["decoder_input_ids"][0]])}


def run(model, feed, heads_off=(), head_dim=None, outs=None, patch=None, grab=None):
    """Logits (T, V) and the residual after each block; `heads_off` [(layer, head)] zeroed,
    `patch` {(layer, head): tensor (T, d)} written in, `grab` {layer: list} given each layer's z."""
    blocks, projections, _ = parts(None, model)
    hooks, residuals = [], []
    for i, block in enumerate(blocks):
        hooks.append(block.register_forward_hook(lambda m, a, o: residuals.append(o[0] if isinstance(o, tuple) else o)))

        def pre(module, args, i=i):
            (z,) = args[:1]
            z = z.clone()
            if grab is not None:
                grab[i] = z.detach().clone()
            for layer, head in heads_off:
                if layer == i:
                    z[..., head * head_dim:(head + 1) * head_dim] = 0
            for (layer, head), value in (patch or {}).items():
                if layer == i:
                    z[..., head * head_dim:(head + 1) * head_dim] = value
            return (z,) + tuple(args[1:])

        hooks.append(projections[i].register_forward_pre_hook(pre))
    try:
        with torch.no_grad():
            logits = model(**feed).logits[0]
    finally:
        for h in hooks:
            h.remove()
    return logits, [r[0] for r in residuals]


def shape(model):
    c = model.config
    layers = getattr(c, "num_decoder_layers", None) or getattr(c, "decoder_layers", None) or getattr(c, "num_hidden_layers", None) or c.n_layer
    if c.model_type == "t5":
        return layers, c.num_heads, c.d_kv
    heads = getattr(c, "decoder_attention_heads", None) or getattr(c, "num_attention_heads", None) or getattr(c, "n_head", None) or c.n_heads
    head_dim = getattr(c, "head_dim", None) or c.hidden_size // heads if hasattr(c, "hidden_size") else c.d_model // heads
    if c.model_type in ("bart", "marian"):
        head_dim = c.d_model // heads
    return layers, heads, head_dim


def fixture(name):
    folder = FIXTURES / name
    model = load(folder)
    seq2seq = model.config.model_type in ("bart", "marian", "t5")
    case = json.loads((folder / "reference.json").read_text())["cases"][0]
    feed = inputs(case, seq2seq)
    layers, heads, head_dim = shape(model)
    logits, residuals = run(model, feed)
    _, _, lens_head = parts(name, model)
    with torch.no_grad():
        lens = torch.stack([torch.softmax(lens_head(r), -1) for r in residuals])
    probs = torch.softmax(logits, -1)
    assert torch.allclose(lens[-1], probs, atol=1e-5), f"{name}: the last layer's lens is the output"
    off = [(0, 0), (layers - 1, heads - 1)]
    ablated, _ = run(model, feed, heads_off=off, head_dim=head_dim)
    save_file(
        {"probs": probs.contiguous(), "lens": lens.contiguous(), "ablated": torch.softmax(ablated, -1).contiguous()},
        folder / "predict.safetensors",
    )
    texts = case.get("texts") or case.get("sources")
    doc = {
        "transformers": __import__("transformers").__version__,
        "text": texts[0],
        "target": (case.get("targets") or [None])[0],
        "ids": (case.get("decoder_input_ids") or case["input_ids"])[0],
        "ablate": ",".join(f"{l}.{h}" for l, h in off),
    }
    (folder / "predict.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    print(name, tuple(probs.shape), "ablated", doc["ablate"])


def induction_patching():
    model = load(INDUCTION)
    vocab = json.loads((INDUCTION / "tokenizer.json").read_text())["model"]["vocab"]
    words = "고양이 공원 노래 꽃 강 고양이 공원".split()
    clean, corrupt = words, words[:1] + ["길"] + words[2:]
    ids = lambda ws: torch.tensor([[vocab["<bos>"]] + [vocab[w] for w in ws]])
    answer, wrong = vocab["노래"], vocab["길"]
    layers, heads, d = 2, 4, 16
    diff = lambda logits: (logits[-1, answer] - logits[-1, wrong]).item()
    grab = {}
    clean_logits, _ = run(model, {"input_ids": ids(clean)}, head_dim=d, grab=grab)
    corrupt_logits, _ = run(model, {"input_ids": ids(corrupt)}, head_dim=d)
    c, k = diff(clean_logits), diff(corrupt_logits)
    table = []
    for layer in range(layers):
        row = []
        for head in range(heads):
            value = grab[layer][..., head * d:(head + 1) * d]
            patched, _ = run(model, {"input_ids": ids(corrupt)}, head_dim=d, patch={(layer, head): value})
            row.append((diff(patched) - k) / (c - k))
        table.append(row)
    doc = {"clean": " ".join(clean), "corrupt": " ".join(corrupt), "answer": "노래", "wrong": "길",
           "clean_diff": c, "corrupt_diff": k, "map": table}
    (FIXTURES.parent / "predict" / "induction-patch.json").parent.mkdir(exist_ok=True)
    (FIXTURES.parent / "predict" / "induction-patch.json").write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    print("induction patching", table)


if __name__ == "__main__":
    for name in CAUSAL + MASKED + SEQ2SEQ:
        fixture(name)
    induction_patching()
