#!/usr/bin/env python3
"""Measures headmap-tiny-induction as saved, picks the heads headmap suggests, and writes the
model card.

Runs after train.py (which calls it), or alone from the repository root:

    /work/venv/bin/python training/tiny_induction/evaluate.py

The model is loaded back from www/models/headmap-tiny-induction/ with transformers
(GPT2LMHeadModel, float32, eager attention, output_attentions=True). What it measures:

  (a) per layer and head, TransformerLens's previous-token and induction scores (head_detector.py,
      error_measure "mul", exclude_bos=False, exclude_current_token=False): for one sequence,
      score = Σ(A ⊙ D) / ΣA over the whole [query × key] matrix, where D is the detection pattern
      built from the sequence's own ids:
        previous token  D[i, i-1] = 1;
        induction       D[i, j] = 1 when ids[j-1] == ids[i] and j-1 < i (the duplicate-token
                        pattern shifted one column to the right);
      then averaged over the probe's sequences. The probe: PROBE_SEQUENCES sequences of
      `<bos> r r`, r being PROBE_WORDS different ordinary words (no punctuation, no special
      token) drawn with random.Random(PROBE_SEED + n), scored on the full sequence (<bos>
      included). The same scores are also given on the second r's rows alone.
  (b) next-word accuracy (greedy: the argmax is the next word) on the probe's first and second
      r, on held-out sequences with a repeated span (first and second occurrence) and on
      held-out ordinary sentences; held-out text comes from corpus.heldout(), which training
      never sees.
  (c) where it stops working: r longer than any in training, sequences past the trained length,
      words the tokenizer does not know, and short repeats inside sentences (COPY_PROBES, one of
      them ambiguous).

It writes, in the model folder: evaluation.json (every number the card quotes), headmap.json
(the heads suggested to headmap's explorer) and README.md (through card.py).
"""

import argparse
import json
import os
import pathlib
import random
import sys

import torch
from transformers import AutoTokenizer, GPT2LMHeadModel
from transformers.utils import logging

logging.set_verbosity_error()

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402

MODEL = ROOT / "www" / "models" / "headmap-tiny-induction"
PROBE_SEED = 1000
PROBE_SEQUENCES = 100
PROBE_WORDS = 25
# the example headmap.json and the card show: a sentence coming back (COPY_PROBES has shorter
# repeats, where the model does not copy)
EXAMPLE = "민수 가 사과 를 먹는다 . 민수 가 사과 를"
# made-up words for the unknown-word probe: none is in the vocabulary, each becomes <unk>
UNKNOWN = ["zorp", "flimble", "quax", "dorn", "블라", "뿌잉", "쿠르릉", "mip"]


def load(folder=MODEL):
    model = GPT2LMHeadModel.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(folder)  # through tokenizer_config.json: the word-level file as it is
    assert tok.convert_ids_to_tokens(tok("고양이 가 Zorp")["input_ids"]) == ["<bos>", "고양이", "가", "<unk>"]
    return model, tok


def run(model, ids):
    """One sequence, no padding: attentions (L, H, T, T) and predictions (T,), where
    predictions[t] is the argmax after ids[: t + 1]."""
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), output_attentions=True)
    return torch.stack(out.attentions)[:, 0].double(), out.logits[0].argmax(-1)


# --- TransformerLens's detection patterns (transformer_lens/head_detector.py) ---

def previous_token_pattern(ids):
    n = len(ids)
    d = torch.zeros(n, n, dtype=torch.float64)
    d[1:, :-1] = torch.eye(n - 1)
    return d.tril()


def duplicate_token_pattern(ids):
    t = torch.tensor(ids)
    d = (t[:, None] == t[None, :]).double()
    d.fill_diagonal_(0)  # a token is always its own duplicate: left out
    return d.tril()


def induction_pattern(ids):
    """The duplicate-token pattern shifted one column to the right, first column zero:
    D[i, j] = 1 when ids[j-1] == ids[i] and j-1 < i."""
    dup = duplicate_token_pattern(ids)
    shifted = torch.roll(dup, shifts=1, dims=1)
    return torch.cat([torch.zeros(len(ids), 1, dtype=torch.float64), shifted[:, 1:]], dim=1).tril()


def bos_pattern(ids):
    """Every row's weight on position 0 (<bos>): where a head puts what it does not spend."""
    d = torch.zeros(len(ids), len(ids), dtype=torch.float64)
    d[:, 0] = 1
    return d


def current_token_pattern(ids):
    return torch.eye(len(ids), dtype=torch.float64)


# measured beside the two asked for, to say what the other heads do
OTHER_PATTERNS = {"duplicate_token": duplicate_token_pattern, "bos": bos_pattern, "current_token": current_token_pattern}


def score(attn, pattern, rows=None):
    """Σ(A ⊙ D) / ΣA per layer and head (error_measure "mul", nothing excluded); `rows`
    restricts both to some query rows."""
    if rows is not None:
        attn, pattern = attn[:, :, rows], pattern[rows]
    return (attn * pattern).sum((-1, -2)) / attn.sum((-1, -2))  # (L, H)


# --- sequences ---

def repeat_probe(n_words, count, seed=PROBE_SEED):
    """`count` texts of r r, r being n_words different ordinary words."""
    return [corpus.repeat_sequence(random.Random(seed + i), n_words)["words"] for i in range(count)]


def with_unknown(words, rng, count):
    """`words` with `count` of its first half's words replaced by made-up ones, in both halves."""
    n = len(words) // 2
    r = list(words[:n])
    for i, w in zip(rng.sample(range(n), count), rng.sample(UNKNOWN, count)):
        r[i] = w
    return r + r


def repeat_stats(model, tok, texts, limit=None):
    """Scores and accuracies over `<bos> r r` sequences of one length.

    Rows: ids[0] is <bos>, ids[1..n] the first r, ids[n+1..2n] the second. Row t predicts
    ids[t+1]. First r: rows 1..n-1 predict r_1..r_{n-1}. Second r: rows n+1..2n-1 predict
    r_1..r_{n-1} again (r_0's return, predicted by row n, cannot be copied: it is left out).
    `limit` splits the second r's rows into those before and from that position on, and the
    previous-token score's rows (<bos>'s aside) the same way."""
    prev_full, ind_full, prev_second, ind_second, other = [], [], [], [], {k: [] for k in OTHER_PATTERNS}
    first_hits, second_hits, before_hits, after_hits, prev_before, prev_after = [], [], [], [], [], []
    for words in texts:
        ids = tok(" ".join(words))["input_ids"]
        n = (len(ids) - 1) // 2
        attn, pred = run(model, ids)
        prev, ind = previous_token_pattern(ids), induction_pattern(ids)
        second_rows = list(range(n + 1, 2 * n + 1))
        prev_full.append(score(attn, prev))
        ind_full.append(score(attn, ind))
        prev_second.append(score(attn, prev, second_rows))
        ind_second.append(score(attn, ind, second_rows))
        for name, make in OTHER_PATTERNS.items():
            other[name].append(score(attn, make(ids)))
        hit = (pred[:-1] == torch.tensor(ids[1:])).tolist()  # hit[t]: row t right
        first_hits += hit[1:n]
        second = list(range(n + 1, 2 * n))
        second_hits += [hit[t] for t in second]
        if limit is not None:
            before_hits += [hit[t] for t in second if t < limit]
            after_hits += [hit[t] for t in second if t >= limit]
            prev_before.append(score(attn, prev, list(range(1, limit))))
            prev_after.append(score(attn, prev, list(range(limit, len(ids)))))

    def mean(xs):
        return torch.stack(xs).mean(0).tolist()

    def rate(xs):
        return {"accuracy": sum(xs) / len(xs) if xs else None, "items": len(xs)}

    out = {"sequences": len(texts), "tokens": len(ids),
           "previous_token": mean(prev_full), "induction": mean(ind_full),
           "previous_token_second_r": mean(prev_second), "induction_second_r": mean(ind_second),
           "first_r": rate(first_hits), "second_r": rate(second_hits)} | {k: mean(v) for k, v in other.items()}
    if limit is not None:
        out[f"second_r_before_{limit}"] = rate(before_hits)
        out[f"second_r_from_{limit}"] = rate(after_hits)
        out[f"previous_token_rows_before_{limit}"] = mean(prev_before)
        out[f"previous_token_rows_from_{limit}"] = mean(prev_after)
    return out


def unknown_stats(model, tok, texts, rng, count):
    """Second-r accuracy when `count` words of r are unknown, split by what the row sees and
    must predict."""
    groups = {"known word, next known": [], "unknown word (<unk>), next known": [], "next is unknown": []}
    unk = tok.unk_token_id
    for words in texts:
        ids = tok(" ".join(with_unknown(words, rng, count)))["input_ids"]
        n = (len(ids) - 1) // 2
        _, pred = run(model, ids)
        for t in range(n + 1, 2 * n):
            right = bool(pred[t] == ids[t + 1])
            if ids[t + 1] == unk:
                groups["next is unknown"].append(right)
            elif ids[t] == unk:
                groups["unknown word (<unk>), next known"].append(right)
            else:
                groups["known word, next known"].append(right)
    return {k: {"accuracy": sum(v) / len(v), "items": len(v)} for k, v in groups.items()}


def heldout_stats(model, tok, heldout):
    """Accuracy on held-out text: the repeated spans (words 2..k of the span at its first and
    at its second occurrence, by kind of span), whole ordinary-sentence sequences, and the
    second r of held-out repeats."""
    hits = {k: [] for k in ("span_first", "span_second", "sentence_span_first", "sentence_span_second",
                            "anywhere_span_first", "anywhere_span_second", "sentences", "repeat_second")}
    # by how many of the span's words come before the predicted one (1, 2, … 5 or more)
    by_seen = {how: {o: {"first": [], "second": []} for o in ("1", "2", "3", "4", "5+")}
               for how in ("sentence", "anywhere")}
    prev_sent = []
    for seq in heldout:
        ids = tok(seq["text"])["input_ids"]
        assert len(ids) == len(seq["words"]) + 1, seq["text"]  # one token per word, after <bos>
        attn, pred = run(model, ids)
        hit = (pred[:-1] == torch.tensor(ids[1:])).tolist()  # hit[t]: row t predicts word t right
        # word w is token w + 1, so row w predicts it
        if seq["kind"] == "span":
            k = seq["span"]
            first = [hit[w] for w in range(seq["first"] + 1, seq["first"] + k)]
            second = [hit[w] for w in range(seq["second"] + 1, seq["second"] + k)]
            for prefix in ("", seq["how"] + "_"):
                hits[prefix + "span_first"] += first
                hits[prefix + "span_second"] += second
            for seen, (a, b) in enumerate(zip(first, second), start=1):
                key = str(seen) if seen < 5 else "5+"
                by_seen[seq["how"]][key]["first"].append(a)
                by_seen[seq["how"]][key]["second"].append(b)
        elif seq["kind"] == "repeat":
            n = seq["span"]
            hits["repeat_second"] += [hit[w] for w in range(n + 1, 2 * n)]
        else:
            hits["sentences"] += hit
            prev_sent.append(score(attn, previous_token_pattern(ids)))
    out = {k: {"accuracy": sum(v) / len(v), "items": len(v)} for k, v in hits.items()}
    out["previous_token_on_sentences"] = torch.stack(prev_sent).mean(0).tolist()
    out["span_by_words_seen"] = {how: {k: {occ: {"accuracy": sum(v) / len(v), "items": len(v)}
                                             for occ, v in d.items()} for k, d in by.items()}
                                 for how, by in by_seen.items()}
    return out


# Repeats inside sentences, and one in random words: (text, the word a copy would give). The
# last has two earlier occurrences with different continuations: no single right copy.
COPY_PROBES = [
    ("고양이 가 잔다 . 고양이 가", "잔다"),
    ("고양이 가 잔다 . 개 가 논다 . 고양이 가", "잔다"),
    ("민수 가 사과 를 먹는다 . 민수 가 사과 를", "먹는다"),
    ("곰 은 아주 크다 . 토끼 는 아주 작다 . 곰 은 아주", "크다"),
    ("the cat sleeps . the cat", "sleeps"),
    ("tom eats a red apple . tom eats a red", "apple"),
    ("여우 cat 잔다 바다 빵 여우 cat", "잔다"),
    ("고양이 가 잔다 . 고양이 가 운다 . 고양이 가", None),
]


def copy_probes(model, tok, layer, head):
    """For each text: the probability of the copied word, the most likely next word, and the
    induction head's weight, from the last row, on each word that followed an earlier
    occurrence of the last word."""
    out = []
    for text, copy in COPY_PROBES:
        ids = tok(text)["input_ids"]
        tokens = tok.convert_ids_to_tokens(ids)
        attn, _ = run(model, ids)
        with torch.no_grad():
            probs = model(input_ids=torch.tensor([ids])).logits[0, -1].softmax(-1)
        targets = [j for j in range(1, len(ids) - 1) if ids[j - 1] == ids[-1]]
        row = attn[layer, head, -1]
        by_head = attn[:, :, -1, targets].sum(-1) if targets else torch.zeros(attn.shape[:2])  # (L, H)
        out.append({"text": text, "tokens": tokens, "copy": copy,
                    "copy_probability": float(probs[tok.convert_tokens_to_ids(copy)]) if copy else None,
                    "next": [{"token": tok.convert_ids_to_tokens(int(i)), "probability": float(p)}
                             for p, i in zip(*probs.topk(3))],
                    "targets": [{"index": j, "token": tokens[j], "weight": float(row[j])} for j in targets],
                    "top_key": tokens[int(row.argmax())], "top_key_weight": float(row.max()),
                    "weight_by_head": by_head.tolist()})
    return out


def unk_norm_ratio(model, tok):
    """The norm of <unk>'s embedding over the mean norm of the vocabulary's words."""
    table = model.transformer.wte.weight.detach()
    words = [i for t, i in tok.get_vocab().items() if t not in tok.all_special_tokens]
    return float(table[tok.unk_token_id].norm() / table[words].norm(dim=1).mean())


def best(grid, layers=None):
    """(layer, head, value) of the largest value in a [layer][head] grid, in `layers` if given."""
    return max(((l, h, v) for l, row in enumerate(grid) for h, v in enumerate(row) if layers is None or l in layers),
               key=lambda t: t[2])


def example(model, tok, text, heads):
    """One text through the model: its tokens, the next-word guesses after it, and each chosen
    head's row of the last token."""
    ids = tok(text)["input_ids"]
    attn, _ = run(model, ids)
    with torch.no_grad():
        probs = model(input_ids=torch.tensor([ids])).logits[0, -1].softmax(-1)
    top = probs.topk(3)
    tokens = tok.convert_ids_to_tokens(ids)
    rows = {}
    for name, (l, h) in heads.items():
        row = attn[l, h, -1].tolist()
        rows[name] = {"layer": l, "head": h, "weights": row, "top_key_index": max(range(len(row)), key=row.__getitem__)}
    return {"text": text, "tokens": tokens, "input_ids": ids,
            "next": [{"token": tok.convert_ids_to_tokens(int(i)), "probability": float(p)}
                     for p, i in zip(top.values, top.indices)],
            "last_row": rows}


def main(argv=None):
    ap = argparse.ArgumentParser(description="Measures the saved model; writes evaluation.json, headmap.json and the card.")
    ap.add_argument("--model", type=pathlib.Path, default=MODEL)
    args = ap.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("TINY_INDUCTION_THREADS", "1")))
    model, tok = load(args.model)
    cfg = model.config
    trained = corpus.MAX_TOKENS

    probe = repeat_probe(PROBE_WORDS, PROBE_SEQUENCES)
    main_probe = repeat_stats(model, tok, probe)
    lengths = {}
    for n in (5, 10, corpus.MAX_REPEAT, 40, (trained - 1) // 2, 60):
        lengths[n] = repeat_stats(model, tok, repeat_probe(n, 50, seed=PROBE_SEED + 10_000 * n),
                                  limit=trained if 2 * n + 1 > trained else None)
    unknown = {c: unknown_stats(model, tok, probe, random.Random(PROBE_SEED + c), c) for c in (1, 5)}
    held = heldout_stats(model, tok, corpus.heldout())

    # the suggested heads: the largest induction score in a layer after the first (an induction
    # head needs a layer before it), and the largest previous-token score anywhere
    il, ih, iv = best(main_probe["induction"], layers=range(1, cfg.n_layer))
    pl, ph, pv = best(main_probe["previous_token"])
    heads = {"induction": (il, ih), "previous_token": (pl, ph)}
    examples = [example(model, tok, EXAMPLE, heads)]

    evaluation = {
        "model": "headmap-tiny-induction",
        "transformers": __import__("transformers").__version__,
        "torch": torch.__version__,
        "how": "transformers GPT2LMHeadModel from the committed files, float32, attn_implementation=eager, "
               "output_attentions=True, one sequence at a time without padding; a prediction is the argmax of "
               "the next-word logits",
        "definitions": {
            "previous_token": "TransformerLens head_detector, error_measure mul, exclude_bos=False, "
                              "exclude_current_token=False: sum(A * D) / sum(A) over the full [query x key] "
                              "matrix with D[i, i-1] = 1, averaged over the probe's sequences",
            "induction": "the same with D[i, j] = 1 when ids[j-1] == ids[i] and j-1 < i",
            "*_second_r": "the same sums over the second r's query rows only",
            "duplicate_token / bos / current_token": "the same with TransformerLens's duplicate-token pattern "
                                                     "(D[i, j] = 1 when ids[j] == ids[i], j < i), with D[i, 0] = 1, "
                                                     "and with D[i, i] = 1",
            "probe": f"{PROBE_SEQUENCES} sequences <bos> r r, r = {PROBE_WORDS} different words drawn from the "
                     "vocabulary without punctuation or special tokens, random.Random(PROBE_SEED + n).sample",
            "first_r / second_r": "next-word accuracy on words 2..n of the first and of the second r (the second "
                                  "r's first word, which cannot be copied, left out)",
            "span_first / span_second": "held-out span sequences: accuracy on words 2..k of the span at its "
                                        "first and at its second occurrence; sentence_* and anywhere_* split them "
                                        "by kind of span (a whole sentence repeated, or a span from anywhere); "
                                        "span_by_words_seen splits each kind by how many of the span's words "
                                        "come before the predicted one",
            "sentences": "held-out ordinary-sentence sequences: accuracy on every next word",
        },
        "probe_seed": PROBE_SEED,
        "shape": {"layers": cfg.n_layer, "heads": cfg.n_head, "positions": cfg.n_positions,
                  "trained_positions": trained},
        "probe": main_probe,
        "ceilings": {"previous_token": (2 * PROBE_WORDS) / (2 * PROBE_WORDS + 1),
                     "induction": PROBE_WORDS / (2 * PROBE_WORDS + 1)},
        "repeat_lengths": {str(n): v for n, v in lengths.items()},
        "unknown_words": {str(c): v for c, v in unknown.items()},
        "heldout": held,
        "examples": examples,
        "copy_probes": copy_probes(model, tok, il, ih),
        # <unk> never occurs in the training text: its (tied) row was only ever trained as an output
        "unk_embedding_norm_ratio": unk_norm_ratio(model, tok),
    }
    (args.model / "evaluation.json").write_text(json.dumps(evaluation, ensure_ascii=False, indent=1) + "\n")

    suggestion = {
        "model": "headmap-tiny-induction",
        "note": "layers and heads from 0; each the largest score of its kind on the induction probe in "
                "evaluation.json (TransformerLens's definitions); no head was assigned a role: these emerged in training",
        "induction": {"place": "decoder_self", "layer": il, "head": ih, "score": iv,
                      "score_second_r": main_probe["induction_second_r"][il][ih]},
        "previous_token": {"place": "decoder_self", "layer": pl, "head": ph, "score": pv},
        "example": {k: examples[0][k] for k in ("text", "tokens", "last_row")},
    }
    (args.model / "headmap.json").write_text(json.dumps(suggestion, ensure_ascii=False, indent=1) + "\n")

    import card
    card.write(args.model, evaluation, suggestion)
    print(json.dumps({"probe": {k: main_probe[k] for k in ("first_r", "second_r")}, "heldout": held,
                      "induction": [il, ih, iv], "previous_token": [pl, ph, pv]}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
