#!/usr/bin/env python3
"""Writes tests/fixtures/heads/<name>.json: per-head detection scores computed by TransformerLens's
own head_detector functions, and attention rollout computed with NumPy, for headmap's tests of
its per-head scores and its rollout.

Not run in CI (it needs PyTorch, transformers and transformer-lens); run by hand and commit the
output:

    /work/venv/bin/pip install transformer-lens
    /work/venv/bin/python scripts/dev/make_head_fixtures.py          # every model folder there is
    /work/venv/bin/python scripts/dev/make_head_fixtures.py bert     # only the named ones

Model folders: tests/fixtures/hf/gpt2 (decoder), tests/fixtures/hf/bert (encoder) and
www/models/headmap-tiny-induction (decoder, trained separately). A folder that is missing or not
loadable yet is skipped with a message; re-run the script once it is there. The output is
deterministic, so re-running rewrites the other files unchanged.

Input, batch 1, no padding: a start token, then 8 distinct ordinary ids (numpy seed 0; no
special ids) repeated twice, so duplicate and induction patterns are non-trivial. The encoder
input is [CLS] r r [SEP], the decoder input is bos r r. Attentions come from
AutoModel(attn_implementation="eager"), float32, output_attentions=True.

JSON layout (L layers, H heads, T tokens):
    model     folder, relative to the repo root
    ids       [T] the input ids
    scores    {detection: {"<exclude_bos>-<exclude_current_token>-<measure>": [L][H]}}
              detection in previous_token, duplicate_token, induction; measure in mul, abs.
              An encoder has no abs keys: TransformerLens asserts |A - P| is lower triangular.
    scores_abs_unrounded   the same keys for abs, before TransformerLens rounds to 3 decimals
    rollout   {fusion: [L][Tq][Tk]}, fusion in mean, max, min; R after each layer
    formulas  what was computed, in words
Numbers are rounded to 7 significant digits.
"""

import argparse
import importlib.metadata
import json
import pathlib
import sys

import numpy as np
import torch
from transformer_lens.head_detector import (
    compute_head_attention_similarity_score,
    get_duplicate_token_head_detection_pattern,
    get_induction_head_detection_pattern,
    get_previous_token_head_detection_pattern,
)
from transformers import AutoConfig, AutoModel

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "heads"

# (folder relative to the repo root, how the input is framed)
MODELS = [
    ("tests/fixtures/hf/gpt2", "decoder"),
    ("tests/fixtures/hf/bert", "encoder"),
    ("www/models/headmap-tiny-induction", "decoder"),
]

SEED = 0
REPEATED = 8  # ordinary ids in the block that is repeated

DETECTIONS = {
    "previous_token": get_previous_token_head_detection_pattern,
    "duplicate_token": get_duplicate_token_head_detection_pattern,
    "induction": get_induction_head_detection_pattern,
}
EXCLUSIONS = [(False, False), (True, False), (False, True), (True, True)]
MEASURES = ["mul", "abs"]
FUSIONS = {"mean": np.mean, "max": np.max, "min": np.min}

FORMULAS = (
    "A = one head's attention [Tq, Tk], float32, from transformers (eager). "
    "P = TransformerLens detection pattern [T, T] from the ids: "
    "previous_token P[i, i-1] = 1; "
    "duplicate_token P[i, j] = 1 if ids[i] == ids[j] and j < i; "
    "induction P[i, j] = duplicate_token[i, j-1] for j >= 1 and j <= i (column 0 is 0; the diagonal "
    "is 1 when ids[i] == ids[i-1]). "
    "Exclusions zero key column 0 (exclude_bos) and/or the diagonal (exclude_current_token). "
    "mul: A' = A with the exclusions zeroed; score = sum(A' * P) / sum(A'). "
    "abs: D = |A - P| with the exclusions zeroed (TransformerLens asserts D is lower triangular, "
    "so an encoder has no abs scores); score = 1 - round(mean(D) * T, 3) = 1 - round(sum(D) / T, 3); "
    "scores_abs_unrounded holds 1 - mean(D) * T. Scores are per prompt; TransformerLens's detect_head "
    "averages over prompts only (mean of the [L, H] matrices), never over layers or heads. "
    "Rollout (Abnar & Zuidema 2020), float64: F_l = fusion over heads (mean, max or min) of A_l; "
    "Ahat_l = 0.5 F_l + 0.5 I, each row divided by its sum; R_0 = Ahat_0, R_l = Ahat_l @ R_{l-1}; "
    "rollout[fusion][l] = R_l. Numbers rounded to 7 significant digits."
)


def sig7(x):
    return float(f"{x:.7g}")


def rounded(a):
    """A nested list of `a`, every number rounded to 7 significant digits."""
    return np.vectorize(sig7, otypes=[object])(np.asarray(a, dtype=np.float64)).tolist()


def tokenizer_specials(folder):
    """Ids the tokenizer treats as special, and the [CLS]/[SEP] ids of its template if it has one."""
    path = folder / "tokenizer.json"
    if not path.exists():
        return set(), {}, None
    tok = json.loads(path.read_text())
    specials = {a["id"] for a in tok.get("added_tokens", []) if a.get("special")}
    template = {}
    post = tok.get("post_processor") or {}
    for name, entry in (post.get("special_tokens") or {}).items():
        template[name] = entry["ids"][0]
        specials.update(entry["ids"])
    vocab = tok["model"].get("vocab")
    if isinstance(vocab, dict):
        # bracketed pieces ([PAD], [unused3], <|endoftext|>) are not ordinary text
        for piece, i in vocab.items():
            if (piece.startswith("[") and piece.endswith("]")) or (piece.startswith("<") and piece.endswith(">")):
                specials.add(i)
        vocab_size = len(vocab)
    else:
        vocab_size = None
    return specials, template, vocab_size


def input_ids(folder, kind, config):
    """The start token, then REPEATED distinct ordinary ids twice (then [SEP] for an encoder)."""
    specials, template, tok_vocab = tokenizer_specials(folder)
    for name in ("bos_token_id", "eos_token_id", "pad_token_id", "cls_token_id", "sep_token_id", "unk_token_id"):
        i = getattr(config, name, None)
        if isinstance(i, int):
            specials.add(i)
    vocab = min(v for v in (config.vocab_size, tok_vocab) if v)
    ordinary = np.array([i for i in range(vocab) if i not in specials])
    if len(ordinary) < REPEATED:
        raise ValueError(f"{folder}: only {len(ordinary)} ordinary ids, need {REPEATED}")
    block = np.random.default_rng(SEED).choice(ordinary, size=REPEATED, replace=False).tolist()
    if kind == "encoder":
        cls = template.get("[CLS]", getattr(config, "cls_token_id", None))
        sep = template.get("[SEP]", getattr(config, "sep_token_id", None))
        if cls is None or sep is None:
            raise ValueError(f"{folder}: no [CLS]/[SEP] id in tokenizer.json or config.json")
        return [cls] + block + block + [sep]
    bos = config.bos_token_id
    if bos is None or not 0 <= bos < config.vocab_size:
        raise ValueError(f"{folder}: config.json bos_token_id {bos} is not an id below vocab_size {config.vocab_size}")
    return [bos] + block + block


def head_scores(attentions, ids):
    """TransformerLens scores of every head: {detection: {key: [L][H]}}, plus unrounded abs."""
    tokens = torch.tensor([ids])  # (1, T)
    scores, unrounded = {}, {}
    for detection, make_pattern in DETECTIONS.items():
        pattern = make_pattern(tokens)  # (T, T)
        scores[detection], unrounded[detection] = {}, {}
        for exclude_bos, exclude_current in EXCLUSIONS:
            for measure in MEASURES:
                key = f"{str(exclude_bos).lower()}-{str(exclude_current).lower()}-{measure}"
                try:
                    table = [
                        [
                            compute_head_attention_similarity_score(
                                a[h].clone(),  # (Tq, Tk)
                                pattern,
                                exclude_bos=exclude_bos,
                                exclude_current_token=exclude_current,
                                error_measure=measure,
                            )
                            for h in range(a.shape[0])
                        ]
                        for a in attentions  # (H, Tq, Tk) per layer
                    ]
                except AssertionError:
                    # TransformerLens's abs asserts |A - P| is lower triangular, false for an encoder
                    continue
                scores[detection][key] = rounded(table)
                if measure == "abs":
                    unrounded[detection][key] = rounded(
                        [[abs_unrounded(a[h], pattern, exclude_bos, exclude_current) for h in range(a.shape[0])] for a in attentions]
                    )
    return scores, unrounded


def abs_unrounded(a, pattern, exclude_bos, exclude_current):
    """TransformerLens's abs score with the same float32 steps, but without round(_, 3)."""
    d = (a - pattern).abs()  # (Tq, Tk)
    if exclude_bos:
        d[:, 0] = 0
    if exclude_current:
        d.fill_diagonal_(0)
    return 1 - (d.mean() * len(d)).item()


def rollout(attentions):
    """{fusion: [L][Tq][Tk]}: R after each layer, float64."""
    out = {}
    for fusion, fuse in FUSIONS.items():
        r, per_layer = None, []
        for a in attentions:
            a = a.double().numpy()  # (H, Tq, Tk)
            ahat = 0.5 * fuse(a, axis=0) + 0.5 * np.eye(a.shape[-1])  # (T, T)
            ahat = ahat / ahat.sum(axis=-1, keepdims=True)
            r = ahat if r is None else ahat @ r  # (T, T)
            per_layer.append(rounded(r))
        out[fusion] = per_layer
    return out


def make(rel, kind):
    folder = ROOT / rel
    if not (folder / "config.json").exists():
        print(f"skip {rel}: no config.json there yet; re-run this script once it exists")
        return
    try:
        config = AutoConfig.from_pretrained(folder)
        model = AutoModel.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
    except (OSError, ValueError) as e:
        print(f"skip {rel}: transformers cannot load it yet ({e.__class__.__name__}: {e})")
        return
    try:
        ids = input_ids(folder, kind, config)
    except ValueError as e:
        print(f"skip {rel}: {e}")
        return
    with torch.no_grad():
        out = model(torch.tensor([ids]), output_attentions=True)
    attentions = [a[0].float() for a in out.attentions]  # per layer (H, Tq, Tk)
    scores, unrounded = head_scores(attentions, ids)
    doc = {
        "model": rel,
        "kind": kind,
        "ids": ids,
        "transformers": importlib.metadata.version("transformers"),
        "transformer_lens": importlib.metadata.version("transformer-lens"),
        "formulas": FORMULAS,
        "scores": scores,
        "scores_abs_unrounded": unrounded,
        "rollout": rollout(attentions),
    }
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{folder.name}.json"
    path.write_text(json.dumps(doc, indent=None, separators=(",", ":")) + "\n")
    print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size} bytes, {len(attentions)} layers, T={len(ids)})")


def main():
    torch.set_num_threads(1)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="folder names to (re)make, e.g. gpt2 headmap-tiny-induction; default all")
    args = parser.parse_args()
    chosen = [(rel, kind) for rel, kind in MODELS if not args.names or pathlib.Path(rel).name in args.names]
    if not chosen:
        sys.exit(f"no model folder named {args.names}; known: {[pathlib.Path(r).name for r, _ in MODELS]}")
    for rel, kind in chosen:
        make(rel, kind)


if __name__ == "__main__":
    main()
