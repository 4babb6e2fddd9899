#!/usr/bin/env python3
"""The ablation table of www/models/headmap-tiny-induction's card: next-word accuracy on the
second copy of 12 unseen random repeats of 12 of its words, with no head off, each head off,
the induction heads (layer 1, heads 0, 1, 3) off and the previous-token head (layer 0, head 3)
off — measured through transformers (a forward pre-hook zeroes the head's slice of c_proj's
input) and through headmap (`headmap predict --ablate`), which must agree.

    cargo build --features cli
    python3 scripts/dev/induction_ablation.py     # needs torch and transformers
"""

import json
import pathlib
import random
import subprocess

import torch
from transformers import GPT2LMHeadModel

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = ROOT / "www" / "models" / "headmap-tiny-induction"
HEADMAP = ROOT / "target" / "debug" / "headmap"
SEED, SEQUENCES, WORDS = 2030, 12, 12  # seeds the card's probe (1000 + n, n < 100) never used
HEAD_DIM = 16

vocab = json.loads((MODEL / "tokenizer.json").read_text())["model"]["vocab"]
ordinary = [w for w in vocab if w[0].isalnum() or "가" <= w[0] <= "힣"]
repeats = [random.Random(SEED + n).sample(ordinary, WORDS) for n in range(SEQUENCES)]
model = GPT2LMHeadModel.from_pretrained(MODEL, attn_implementation="eager", dtype=torch.float32).eval()

CASES = [("none", "")] + [(f"{l}.{h}", f"{l}.{h}") for l in range(2) for h in range(4)]
CASES += [("induction heads 1.0, 1.1, 1.3", "1.0,1.1,1.3"), ("previous-token head 0.3", "0.3")]


def second_copy_accuracy(predicted, words):
    """Share of the second copy's words 2..n predicted from the word before (the first cannot be copied)."""
    tokens = ["<bos>"] + words + words
    hits = [predicted[t] == tokens[t + 1] for t in range(WORDS + 1, 2 * WORDS)]
    return sum(hits) / len(hits)


def transformers_accuracy(spec):
    off = [tuple(map(int, h.split("."))) for h in spec.split(",") if h]
    hooks = []
    for layer, block in enumerate(model.transformer.h):

        def pre(module, args, layer=layer):
            z = args[0].clone()
            for l, h in off:
                if l == layer:
                    z[..., h * HEAD_DIM:(h + 1) * HEAD_DIM] = 0
            return (z,) + tuple(args[1:])

        hooks.append(block.attn.c_proj.register_forward_pre_hook(pre))
    try:
        scores = []
        for words in repeats:
            ids = torch.tensor([[vocab["<bos>"]] + [vocab[w] for w in words + words]])
            with torch.no_grad():
                best = model(ids).logits[0].argmax(-1).tolist()
            inverse = {i: w for w, i in vocab.items()}
            scores.append(second_copy_accuracy([inverse[i] for i in best], words))
        return sum(scores) / len(scores)
    finally:
        for h in hooks:
            h.remove()


def headmap_accuracy(spec):
    scores = []
    for at in range(0, len(repeats), 8):  # a batch holds 8 texts
        batch = repeats[at:at + 8]
        args = [str(HEADMAP), "predict", "--model", str(MODEL), "--top-k", "1"]
        for words in batch:
            args += ["--text", " ".join(words + words)]
        if spec:
            args += ["--ablate", spec]
        doc = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
        for words, row in zip(batch, doc["rows"]):
            scores.append(second_copy_accuracy([p[0]["token"] if p else None for p in row["predictions"]], words))
    return sum(scores) / len(scores)


print("| heads off | transformers | headmap |")
print("|---|---|---|")
for name, spec in CASES:
    print(f"| {name} | {transformers_accuracy(spec):.2f} | {headmap_accuracy(spec):.2f} |")
