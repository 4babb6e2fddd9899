#!/usr/bin/env python3
"""Measures headmap-tiny-ko-en as saved, and writes what headmap's tests and readers need.

Runs after train.py (which calls it), or alone from the repository root:

    /work/venv/bin/python training/tiny_ko_en/evaluate.py

The model is loaded back from www/models/headmap-tiny-ko-en/ (the f16 file, widened to f32)
with transformers' eager attention and output_attentions=True, one held-out example at a
time (no padding), and measured on the held-out examples of corpus.py:

  (a) greedy translation (generate, num_beams=1): exact match of the output ids with the
      reference's, and teacher-forced token accuracy (argmax = label, </s> included);
  (b) per decoder layer and head, the cross-attention mass from an English word to the Korean
      word it translates (the generator's alignment): for each of the word's tokens, the
      weights on the Korean word's tokens summed, then averaged over the word's tokens. Two
      readings of "from the word": the decoder row whose input is the word's token (how headmap
      labels rows under teacher forcing), and the row that predicts it (one row earlier);
  (c) per encoder layer and head, the self-attention mass from the pronoun's tokens (queries,
      averaged) to its antecedent's tokens (keys, summed): 그것 → 동물, stems only, particles not;
  (d) per decoder layer and head, the cross-attention mass on the antecedent from the rows that
      predict the referent's English word: where the decoder looks the referent up itself.

It also runs a few probes outside the held-out distribution (PROBES) to show where the model
stops working.

An item is one aligned word (b) or one pronoun (c); an aggregate is the mean over all items of
all examples, an example's value the mean over its own items.

It writes, in the model folder: heldout.json (everything a Rust test needs to recompute the
figures from the committed files: ids, token spans, expected greedy ids and every per-head
value), headmap.json (the heads that carry each pattern, chosen by these figures) and README.md
(the model card, via card.py); and tests/fixtures/hf/tiny-ko-en/reference.{json,safetensors},
the parity reference in the format of scripts/dev/make_hf_fixtures.py.
"""

import argparse
import collections
import json
import os
import pathlib
import sys

import torch
from safetensors.torch import save_file
from transformers import MarianMTModel, PreTrainedTokenizerFast
from transformers.utils import logging

# generate() warns on every call that max_new_tokens overrides the saved max_length (64)
logging.set_verbosity_error()

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402

MODEL = ROOT / "www" / "models" / "headmap-tiny-ko-en"
FIXTURE = ROOT / "tests" / "fixtures" / "hf" / "tiny-ko-en"
MAX_NEW_TOKENS = 40  # the longest reference has 19 tokens with </s>
START = 2  # <s>, the decoder start token


def load(folder=MODEL):
    model = MarianMTModel.from_pretrained(folder, attn_implementation="eager", dtype=torch.float32).eval()
    tok = PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"), pad_token="<pad>",
                                  unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    return model, tok


def token_span(offsets, special, start, end):
    """Indices of the tokens whose characters overlap [start, end); special tokens never do."""
    return [i for i, ((s, e), sp) in enumerate(zip(offsets, special)) if not sp and s < end and e > start]


def encode_with_offsets(tok, text):
    enc = tok(text, return_offsets_mapping=True, return_special_tokens_mask=True)
    return enc["input_ids"], [tuple(o) for o in enc["offset_mapping"]], enc["special_tokens_mask"]


NAMES = {e.en for e in corpus.PEOPLE}
NOUNS = {e for _, e in corpus.ANIMALS + corpus.OBJECTS + corpus.PLACES}
VERBS = {"gave", "give", "crossed", "cross", "saw"}
ADVERBS = {e for _, e in corpus.ADVERBS}


def word_class(word, is_referent):
    """The kind of an aligned English word, to break alignment down by it."""
    if is_referent:
        return "referent (aligned to the pronoun)"
    if word in NAMES:
        return "name"
    if word in NOUNS:
        return "noun"
    if word in VERBS:
        return word
    if word == "not":
        return "not"
    return "adverb" if word in ADVERBS else "state"


def measure(model, tok, example):
    """One held-out example: its ids, spans, greedy output and per-head values."""
    src, src_off, src_sp = encode_with_offsets(tok, example["source"])
    labels, tgt_off, tgt_sp = encode_with_offsets(tok, example["target"])
    dec = [START] + labels[:-1]  # shift right behind the decoder start token
    with torch.no_grad():
        out = model(input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([dec]), output_attentions=True)
        greedy = model.generate(torch.tensor([src]), num_beams=1, do_sample=False, max_new_tokens=MAX_NEW_TOKENS)[0].tolist()
    predicted = out.logits[0].argmax(-1).tolist()
    cross = torch.stack(out.cross_attentions)[:, 0].double()      # (L, H, Tt, Ts)
    enc_self = torch.stack(out.encoder_attentions)[:, 0].double()  # (L, H, Ts, Ts)

    record = {
        "kind": example["kind"],
        "seed": example.get("seed", False),
        "source": example["source"],
        "target": example["target"],
        "input_ids": src,
        "labels": labels,
        "decoder_input_ids": dec,
        "greedy_output_ids": greedy,
        "greedy_text": tok.decode(greedy, skip_special_tokens=True),
        "exact_match": greedy == [START] + labels,
        "tokens_correct": sum(p == l for p, l in zip(predicted, labels)),
        "tokens": len(labels),
    }

    # (b) one item per aligned English word
    items, per_input, per_predict = [], [], []
    by_class = collections.defaultdict(list)
    for en_i, ko_i in example["alignment"]:
        ew, kw = example["target_words"][en_i], example["source_words"][ko_i]
        t_tokens = token_span(tgt_off, tgt_sp, ew["start"], ew["end"])
        s_tokens = token_span(src_off, src_sp, kw["start"], kw["end"])
        input_rows = [j + 1 for j in t_tokens]  # decoder input j+1 is label j
        predict_rows = t_tokens                 # row j's output predicts label j
        items.append({"target_word": ew["text"], "source_word": kw["text"], "target_tokens": t_tokens,
                      "source_tokens": s_tokens, "input_rows": input_rows, "predict_rows": predict_rows})
        keys = cross[:, :, :, s_tokens].sum(-1)                        # (L, H, Tt)
        per_input.append(keys[:, :, input_rows].mean(-1))              # (L, H)
        per_predict.append(keys[:, :, predict_rows].mean(-1))
        referent = "pronoun" in example and kw["start"] == example["pronoun"]["start"]
        by_class[word_class(ew["text"], referent)].append(per_predict[-1])
    record["alignment"] = items
    record["cross_input_rows"] = torch.stack(per_input).mean(0).tolist()
    record["cross_predict_rows"] = torch.stack(per_predict).mean(0).tolist()
    sums = {"cross_input_rows": torch.stack(per_input).sum(0), "cross_predict_rows": torch.stack(per_predict).sum(0)}
    for name, values in by_class.items():
        sums[f"by_class/{name}"] = (torch.stack(values).sum(0), len(values))

    # (c) pronoun → antecedent in the encoder
    if "pronoun" in example:
        p, a = example["pronoun"], example["antecedent"]
        q_tokens = token_span(src_off, src_sp, p["start"], p["end"])
        k_tokens = token_span(src_off, src_sp, a["start"], a["end"])
        mass = enc_self[:, :, q_tokens][:, :, :, k_tokens].sum(-1).mean(-1)  # (L, H)
        top = enc_self[:, :, q_tokens[0]].argmax(-1)                          # (L, H): key with the most weight
        record["pronoun"] = {"text": p["text"], "tokens": q_tokens}
        record["antecedent"] = {"text": a["text"], "tokens": k_tokens}
        record["coreference"] = mass.tolist()
        record["coreference_top_key"] = top.tolist()
        if example.get("seed"):
            record["pronoun_rows"] = enc_self[:, :, q_tokens[0]].tolist()  # (L, H, Ts): the rows headmap shows
        sums["coreference"] = mass
        sums["coreference_hits"] = torch.isin(top, torch.tensor(k_tokens)).double()
        # (d) the decoder's side: from the rows that predict the referent's English word
        # ("animal" in "The animal was too tired."), cross-attention on the antecedent
        ko_i = next(i for i, w in enumerate(example["source_words"]) if w["start"] == p["start"])
        item = items[next(n for n, (_, k) in enumerate(example["alignment"]) if k == ko_i)]
        rows = item["predict_rows"]
        referent = cross[:, :, rows][:, :, :, k_tokens].sum(-1).mean(-1)  # (L, H)
        record["referent_rows"] = rows
        record["cross_referent_to_antecedent"] = referent.tolist()
        sums["cross_referent_to_antecedent"] = referent
    record["source_tokens"] = tok.convert_ids_to_tokens(src)
    record["target_tokens"] = tok.convert_ids_to_tokens(labels)
    return record, sums, len(items)


def second_subject(text):
    """The word that names sentence 2's subject: what a pronoun was resolved to."""
    parts = [p for p in text.split(".") if p.strip()]
    if len(parts) < 2:
        return None
    words = parts[1].split()
    return words[1] if words and words[0] == "The" and len(words) > 1 else (words[0] if words else None)


def evaluate(model, tok, heldout):
    records, totals, counts = [], {}, {"cross_input_rows": 0, "cross_predict_rows": 0, "coreference": 0}
    for example in heldout:
        record, sums, n_aligned = measure(model, tok, example)
        records.append(record)
        for k, v in sums.items():
            if k.startswith("by_class/"):
                total, n = totals.get(k, (0, 0))
                totals[k] = (total + v[0], n + v[1])
            else:
                totals[k] = totals.get(k, 0) + v
        counts["cross_input_rows"] += n_aligned
        counts["cross_predict_rows"] += n_aligned
        if "coreference" in sums:
            counts["coreference"] += 1
    pronoun = [r for r in records if "pronoun" in r]
    referent_right = sum(second_subject(r["greedy_text"]) == second_subject(r["target"]) for r in pronoun)
    aggregate = {
        "examples": len(records),
        "exact_match": sum(r["exact_match"] for r in records) / len(records),
        "exact_match_count": sum(r["exact_match"] for r in records),
        "token_accuracy": sum(r["tokens_correct"] for r in records) / sum(r["tokens"] for r in records),
        "pronoun_examples": len(pronoun),
        "pronoun_exact_match": sum(r["exact_match"] for r in pronoun) / len(pronoun),
        "referent_named_right": referent_right / len(pronoun),
        "cross_input_rows": (totals["cross_input_rows"] / counts["cross_input_rows"]).tolist(),
        "cross_predict_rows": (totals["cross_predict_rows"] / counts["cross_predict_rows"]).tolist(),
        "coreference": (totals["coreference"] / counts["coreference"]).tolist(),
        "coreference_top_key_on_antecedent": (totals["coreference_hits"] / counts["coreference"]).tolist(),
        "cross_referent_to_antecedent": (totals["cross_referent_to_antecedent"] / counts["coreference"]).tolist(),
        "cross_predict_rows_by_word": {k.split("/", 1)[1]: {"items": totals[k][1], "mean": (totals[k][0] / totals[k][1]).tolist()}
                                       for k in sorted(totals) if k.startswith("by_class/")},
        "items": counts,
        # what a head spreading its weight evenly over the source would score, for scale
        "uniform_baseline": uniform_baselines(records),
    }
    return records, aggregate


def uniform_baselines(records):
    cross, coref, n_cross, n_coref = 0.0, 0.0, 0, 0
    for r in records:
        for item in r["alignment"]:
            cross += len(item["source_tokens"]) / len(r["input_ids"])
            n_cross += 1
        if "pronoun" in r:
            coref += len(r["antecedent"]["tokens"]) / len(r["input_ids"])
            n_coref += 1
    return {"cross": cross / n_cross, "coreference": coref / n_coref}


def best(grid):
    """(layer, head, value) of the largest value in a [layer][head] grid."""
    return max(((l, h, v) for l, row in enumerate(grid) for h, v in enumerate(row)), key=lambda t: t[2])


def choose_heads(aggregate, records):
    """The head with the largest held-out mean for each pattern, with what it does on the seeds."""
    seed_animal, seed_give = [r for r in records if r["seed"]]
    layer, head, mass = best(aggregate["coreference"])
    top = seed_animal["coreference_top_key"][layer][head]
    q = seed_animal["pronoun"]["tokens"][0]
    p_layer, p_head, p_mass = best(aggregate["cross_predict_rows"])
    return {
        "model": "headmap-tiny-ko-en",
        "note": "layers and heads from 0, each the largest held-out mean of its measure in heldout.json; "
                "no head was assigned a role: these emerged in training",
        "coreference": {
            "place": "encoder_self", "layer": layer, "head": head, "mass": mass,
            "top_key_on_antecedent": aggregate["coreference_top_key_on_antecedent"][layer][head],
            "seed": {"text": seed_animal["source"], "tokens": seed_animal["source_tokens"], "query_index": q,
                     "query": seed_animal["pronoun"]["text"], "antecedent": seed_animal["antecedent"]["text"],
                     "antecedent_indices": seed_animal["antecedent"]["tokens"],
                     "weights": seed_animal["pronoun_rows"][layer][head],
                     "mass": seed_animal["coreference"][layer][head], "top_key_index": top,
                     "top_key": seed_animal["source_tokens"][top],
                     "top_key_on_antecedent": top in seed_animal["antecedent"]["tokens"]},
        },
        # Decoder row j reads token j of its input and predicts label j: the row that predicts an
        # English word is labelled (in headmap, under teacher forcing) with the word before it.
        "alignment": {"place": "cross", "rows": "predict", "layer": p_layer, "head": p_head, "mass": p_mass,
                      "input_rows_mass": aggregate["cross_input_rows"][p_layer][p_head],
                      "seed_mass": seed_give["cross_predict_rows"][p_layer][p_head]},
        "examples": [{"text": r["source"], "target": r["target"], "greedy": r["greedy_text"]} for r in records if r["seed"]],
    }


def dump_examples(path, header, records):
    """JSON with one example per line: diffable, and small enough to read."""
    head = json.dumps(header, ensure_ascii=False, indent=1)
    body = ",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in records)
    path.write_text(head[:-2] + ',\n "examples": [\n' + body + "\n ]\n}\n")


# --- the parity reference, as make_hf_fixtures.py writes them ---

def record_tensors(tensors, prefix, out):
    for kind in ("encoder_attentions", "decoder_attentions", "cross_attentions"):
        for i, a in enumerate(getattr(out, kind)):
            tensors[f"{prefix}.{kind}.{i}"] = a
    tensors[f"{prefix}.last_hidden_state"] = out.last_hidden_state
    tensors[f"{prefix}.encoder_last_hidden_state"] = out.encoder_last_hidden_state


def write_reference(model, tok, heldout, fixture):
    """Teacher-forced cases (padded batches, like the other seq2seq fixtures) and greedy ids
    for the seeds. The weights are not copied: the test loads them from the model folder."""
    seeds = [e for e in heldout if e.get("seed")]
    pronoun = [e for e in heldout if e["kind"] == "pronoun" and not e.get("seed")]
    batches = [seeds, seeds[:1], pronoun[:3]]
    cases, tensors = [], {}
    for n, batch in enumerate(batches):
        sources, targets = [e["source"] for e in batch], [e["target"] for e in batch]
        enc = tok(sources, padding=True, return_tensors="pt")
        labels = tok(targets, padding=True, return_tensors="pt")
        dec = labels["input_ids"].new_full(labels["input_ids"].shape, tok.pad_token_id)
        dec[:, 1:] = labels["input_ids"][:, :-1]
        dec[:, 0] = model.config.decoder_start_token_id
        dec_mask = labels["attention_mask"].clone()
        dec_mask[:, 1:] = labels["attention_mask"][:, :-1]
        dec_mask[:, 0] = 1
        with torch.no_grad():
            out = model.model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], decoder_input_ids=dec,
                              decoder_attention_mask=dec_mask, output_attentions=True)
        record_tensors(tensors, f"case{n}", out)
        cases.append({"sources": sources, "targets": targets, "input_ids": enc["input_ids"].tolist(),
                      "attention_mask": enc["attention_mask"].tolist(), "labels": labels["input_ids"].tolist(),
                      "decoder_input_ids": dec.tolist(), "decoder_attention_mask": dec_mask.tolist()})
    greedy = []
    for text in cases[0]["sources"]:
        ids = tok(text)["input_ids"]  # unpadded: generate() sees the text alone, as headmap does
        with torch.no_grad():
            out = model.generate(torch.tensor([ids]), num_beams=1, do_sample=False, max_new_tokens=MAX_NEW_TOKENS)
        greedy.append({"input_ids": ids, "max_new_tokens": MAX_NEW_TOKENS, "output_ids": out[0].tolist()})
    fixture.mkdir(parents=True, exist_ok=True)
    reference = {"transformers": __import__("transformers").__version__,
                 "model": "www/models/headmap-tiny-ko-en", "cases": cases, "greedy": greedy}
    (fixture / "reference.json").write_text(json.dumps(reference, ensure_ascii=False, indent=1) + "\n")
    save_file({k: v.contiguous().to(torch.float32) for k, v in tensors.items()}, fixture / "reference.safetensors")
    return greedy


def greedy_margins(model, tok, texts):
    """The smallest gap between the best and second-best logit over each greedy decode: how
    far a 1e-4 difference in another implementation is from changing a token."""
    margins = []
    for text in texts:
        ids = torch.tensor([tok(text)["input_ids"]])
        with torch.no_grad():
            out = model.generate(ids, num_beams=1, do_sample=False, max_new_tokens=MAX_NEW_TOKENS,
                                 output_logits=True, return_dict_in_generate=True)
        gaps = [float(torch.topk(l[0], 2).values.diff().abs()) for l in out.logits]
        margins.append(min(gaps))
    return margins


# Inputs outside the held-out distribution, to show where the model stops working:
# (source, the translation a reader would expect or None when there is no right one, why).
PROBES = [
    ("동물이 길을 건너지 않았다.", "The animal did not cross the street.", "the seed's first sentence alone"),
    ("영희에게 민수가 책을 주었다.", "Minsu gave Younghee a book.", "scrambled word order, right in Korean, never in the templates"),
    ("민수가 고양이를 보았다. 영희가 그것에게 컵을 주었다.", "Minsu saw the cat. Younghee gave the cat a cup.",
     "a pronoun that is not the subject"),
    ("민수가 영희에게 책을 주었다. 그녀는 아주 행복했다. 그는 너무 피곤했다.",
     "Minsu gave Younghee a book. Younghee was very happy. Minsu was too tired.", "three sentences"),
    ("고양이가 개를 보았다. 그것은 너무 피곤했다.", None, "two animals: 그것 is ambiguous"),
    ("민수가 영희에게 책을 주었다. 그것은 너무 피곤했다.", None, "nothing that 그것 can be is tired"),
    ("영희가 길을 건넜다. 그는 너무 피곤했다.", None, "no man for 그"),
    ("그것은 너무 피곤했다.", None, "a pronoun with nothing before it"),
    ("동물이 길을 건너지 않았다. 그것은 너무 무서웠다.", None, "무서웠다 (scared) is not in the vocabulary"),
    ("The animal didn't cross the street because it was too tired.", None, "English input"),
]
PRONOUNS = ("그것", "그", "그녀")


def run_probes(model, tok):
    probes = []
    for source, expected, why in PROBES:
        ids = tok(source)["input_ids"]
        with torch.no_grad():
            out = model.generate(torch.tensor([ids]), num_beams=1, do_sample=False, max_new_tokens=MAX_NEW_TOKENS)[0].tolist()
            enc = model.model.encoder(input_ids=torch.tensor([ids]), output_attentions=True)
        tokens = tok.convert_ids_to_tokens(ids)
        probe = {"source": source, "why": why, "expected": expected, "input_ids": ids, "source_tokens": tokens,
                 "greedy_output_ids": out, "greedy_text": tok.decode(out, skip_special_tokens=True)}
        queries = [i for i, t in enumerate(tokens) if t in PRONOUNS]
        if queries:
            attn = torch.stack(enc.attentions)[:, 0, :, queries[-1]]  # (L, H, Ts): the last pronoun's rows
            probe["pronoun_index"] = queries[-1]
            probe["pronoun_top_key"] = attn.argmax(-1).tolist()
        probes.append(probe)
    return probes


def main(argv=None):
    ap = argparse.ArgumentParser(description="Measures the saved model; writes heldout.json, headmap.json, the card and the reference.")
    ap.add_argument("--model", type=pathlib.Path, default=MODEL)
    ap.add_argument("--fixture", type=pathlib.Path, default=FIXTURE)
    args = ap.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("TINY_KO_EN_THREADS", "1")))
    model, tok = load(args.model)
    _, heldout = corpus.build_splits()
    records, aggregate = evaluate(model, tok, heldout)
    aggregate["seed_greedy_min_logit_margin"] = greedy_margins(model, tok, [r["source"] for r in records if r["seed"]])
    L, H = model.config.encoder_layers, model.config.encoder_attention_heads
    header = {
        "model": "headmap-tiny-ko-en",
        "transformers": __import__("transformers").__version__,
        "torch": torch.__version__,
        "how": "transformers MarianMTModel from the committed files, float32, attn_implementation=eager, "
               "output_attentions=True, one example at a time without padding; greedy = generate(num_beams=1, "
               f"do_sample=False, max_new_tokens={MAX_NEW_TOKENS})",
        "definitions": {
            "cross_input_rows": "per decoder layer and head: for each aligned English word, the cross-attention "
                                "weights of each row in input_rows summed over source_tokens, averaged over the "
                                "rows; an example's value is the mean over its aligned words",
            "cross_predict_rows": "the same over predict_rows (row j predicts label j; input row j+1 holds it)",
            "coreference": "per encoder layer and head: the self-attention weights of each pronoun token (query) "
                           "summed over the antecedent's tokens (keys), averaged over the pronoun's tokens",
            "coreference_top_key": "per encoder layer and head: the key index with the largest weight in the row "
                                   "of the pronoun's first token",
            "cross_referent_to_antecedent": "per decoder layer and head: the cross-attention weights of the rows "
                                            "that predict the English word naming the pronoun's referent "
                                            "(referent_rows) summed over the antecedent's tokens, averaged over the rows",
            "cross_predict_rows_by_word": "cross_predict_rows split by the kind of English word (name, noun, "
                                          "verb, not, adverb, state, or the referent aligned to the pronoun)",
            "aggregate": "means over all items (aligned words, or pronouns) of all examples, so "
                         "sum(example value × its items) / sum(items)",
            "exact_match": "greedy_output_ids == [decoder start] + labels",
            "token_accuracy": "teacher-forced: argmax of the logits at row j == labels[j], over all labels",
        },
        "shape": {"encoder_layers": L, "decoder_layers": model.config.decoder_layers, "heads": H},
        "aggregate": aggregate,
    }
    header["probes"] = run_probes(model, tok)
    dump_examples(args.model / "heldout.json", header, records)
    heads = choose_heads(aggregate, records)
    (args.model / "headmap.json").write_text(json.dumps(heads, ensure_ascii=False, indent=1) + "\n")
    greedy = write_reference(model, tok, heldout, args.fixture)
    for g, r in zip(greedy, records):
        assert g["output_ids"] == r["greedy_output_ids"], "greedy in a batch of one differs"

    import card
    card.write(args.model, args.fixture, header, records, heads)
    print(json.dumps({k: v for k, v in aggregate.items() if not isinstance(v, list)}, indent=1))
    print(json.dumps(heads, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
