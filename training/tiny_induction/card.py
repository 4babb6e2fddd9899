"""Writes the model card (README.md) of headmap-tiny-induction from what evaluate.py measured.

Called by evaluate.py; every number in the card comes from training.json, evaluation.json and
headmap.json as just written, so the card cannot drift from the files it describes. The
paragraphs in NOTES were written by hand after reading those numbers.
"""

import hashlib
import json
import pathlib
import sys

import corpus

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import timeline  # noqa: E402  (training/timeline.py)

FILES = ["config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
         "training.json",
         "evaluation.json", "headmap.json"]


def sha256(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pct(x):
    return f"{100 * x:.1f} %"


def role(p, l, h):
    """What a head's probe scores say it does (the first that holds), from 0-based layer l, head h."""
    if p["previous_token"][l][h] >= 0.5:
        return "previous token"
    if p["induction_second_r"][l][h] >= 0.5:
        return "induction"
    if p["duplicate_token"][l][h] >= 0.25:
        return "earlier copies of the current word"
    if p["bos"][l][h] >= 0.5:
        return "mostly `<bos>`"
    if p["current_token"][l][h] >= 0.5:
        return "mostly the current word"
    return "mixed"


def write(model_dir, ev, heads):
    training = json.loads((model_dir / "training.json").read_text())
    config = json.loads((model_dir / "config.json").read_text())
    tokenizer = json.loads((model_dir / "tokenizer.json").read_text())
    vocab = tokenizer["model"]["vocab"]
    size = (model_dir / "model.safetensors").stat().st_size
    p, held, ceil = ev["probe"], ev["heldout"], ev["ceilings"]
    ind, prev = heads["induction"], heads["previous_token"]
    il, ih, pl, ph = ind["layer"], ind["head"], prev["layer"], prev["head"]
    L, H = ev["shape"]["layers"], ev["shape"]["heads"]
    trained = ev["shape"]["trained_positions"]
    curve = training["loss_curve"]
    jump = next((e for e in curve if e["second_r_accuracy"] >= 0.5), None)
    before = [e for e in curve if e["second_r_accuracy"] < 0.05]
    n_words = len(corpus.vocabulary())
    ex = ev["examples"][0]

    out = []
    w = out.append
    w("# headmap-tiny-induction\n")
    w(f"A toy-scale language model in GPT-2's layout — {training['parameters']:,} parameters, "
      f"{size / 1e6:.2f} MB in float32 — trained for headmap on generated Korean and English text in which spans "
      "of words come back, so that two well-known kinds of attention head can be seen in a real, trained model: "
      "a **previous-token head**, which looks at the word just before, and an **induction head**, which looks "
      "at the word that came after an earlier occurrence of the current word, and so lets the model continue a "
      "repeat.\n")
    w(f"It is **not a model of Korean or English**: it knows {n_words} words, its sentences come from a handful of "
      "templates, and it was trained in minutes on a CPU. Outside that, its predictions mean little.\n")
    row = ex["last_row"]["induction"]
    target = next(j for j in range(1, len(ex["tokens"]) - 1) if ex["tokens"][j - 1] == ex["tokens"][-1])
    largest = ", its largest weight" if row["top_key_index"] == target else \
        f" (its largest weight is on `{ex['tokens'][row['top_key_index']]}`)"
    w(f"In `{ex['text']}`, the row of the last `{ex['tokens'][-1]}` in the induction head (layer {il}, head {ih}) "
      f"puts {row['weights'][target]:.2f} on `{ex['tokens'][target]}`, the word after the first `{ex['tokens'][-1]}`"
      f"{largest}, and the model's most likely next word is `{ex['next'][0]['token']}` "
      f"(probability {ex['next'][0]['probability']:.2f}). Shorter repeats inside sentences are another matter "
      "(see *Where it fails*).\n")

    w("## The model\n")
    w("| | |\n|---|---|")
    w(f"| layout | `{config['model_type']}` (transformers' GPT2LMHeadModel): pre-LN decoder, learned positions, "
      "the output layer tied to the word embeddings |")
    w(f"| size | n_embd {config['n_embd']}, {config['n_layer']} layers, {config['n_head']} heads "
      f"(d_k {config['n_embd'] // config['n_head']}), MLP {config['n_inner']} ({config['activation_function']}), "
      f"{config['n_positions']} positions, of which training used the first {trained} |")
    w(f"| vocabulary | {len(vocab)} words: {len(corpus.korean_words())} Korean, {len(corpus.english_words())} "
      f"English, {len(corpus.PUNCTUATION)} punctuation marks and 3 special tokens |")
    w(f"| weights | `model.safetensors`, float32, {size:,} bytes |")
    w(f"| special tokens | `<unk>` {vocab['<unk>']}, `<pad>` {vocab['<pad>']}, `<bos>` {vocab['<bos>']} "
      f"(first in every sequence; config.json's bos_token_id and eos_token_id are both "
      f"{config['bos_token_id']}, as GPT-2's `<|endoftext|>` is both; pad_token_id {config['pad_token_id']}) |")
    w("")
    w("headmap reads the folder as it is (`config.json`, `model.safetensors`, `tokenizer.json`; the explorer "
      "also reads `headmap.json`, for the head it opens first); so does transformers "
      "(`GPT2LMHeadModel.from_pretrained(folder)` and `AutoTokenizer.from_pretrained(folder)`; "
      "`tokenizer_config.json` is there only so that AutoTokenizer picks the plain fast tokenizer instead of "
      "GPT-2's byte-level one, which would misread the word-level `tokenizer.json`).\n")

    w("## Tokenizer\n")
    w(f"`tokenizer.json`, built with the `tokenizers` library: a word-level model over the {n_words} words of "
      "`training/tiny_induction/corpus.py`, with NFC normalization and lower-casing, split on whitespace and "
      "punctuation (`Whitespace`: a run of letters and digits, or a run of other non-space characters), and a "
      "template that puts `<bos>` first. Korean particles are words of their own, written apart from their noun "
      "(`고양이 가 잔다 .`), so every token is a whole word and a head's rows and columns read as words. A word "
      "outside the vocabulary becomes `<unk>`.\n")
    w(f"- `{ex['text']}` → " + " ".join(f"`{t}`" for t in ex["tokens"]))
    w("")

    w("## Training text\n")
    mix = training["corpus"]["mix"]
    w(f"Generated by `corpus.py`, each sequence at most {training['corpus']['max_tokens']} tokens with its `<bos>`:\n")
    w(f"- **repeat** ({pct(mix['repeat'])} of sequences): `r r`, where r is 4 to {training['corpus']['max_repeat']} "
      "different words drawn at random from the whole vocabulary but punctuation. The first r cannot be "
      "predicted; the second can only be predicted by finding the current word's earlier occurrence and "
      "copying the word after it;")
    w(f"- **span** ({pct(mix['span'])}): text in which a span of words comes back. "
      f"{pct(corpus.SENTENCE_SPANS)} of them are ordinary sentences one of which comes back whole, after a sentence "
      "end (`고양이 가 잔다 . 개 가 논다 . 고양이 가 잔다 .`), as text often repeats itself; the rest are sentences or "
      f"random words in which 2 to {training['corpus']['max_span']} words from anywhere come back anywhere;")
    w(f"- **sentences** ({pct(mix['sentences'])}): ordinary template sentences, Korean "
      "(`민수 는 사과 를 먹는다 .`, `개 가 공원 에서 논다 .`) and English (`the cat sleeps .`, "
      "`tom eats an apple .`), most sequences in one language, a quarter switching sentence by sentence.\n")
    seen = training["corpus"]["sequences_seen"]
    w(f"Training drew {sum(seen.values()):,} sequences from a seeded stream ({seen['repeat']:,} repeat, "
      f"{seen['span']:,} span, {seen['sentences']:,} sentences). The held-out sequences "
      f"({training['corpus']['heldout']}, {training['corpus']['heldout'] // 3} of each kind) come from their own seed, "
      "and no training sequence has the text of a held-out one.\n")

    w("## Training\n")
    w(f"```sh\n/work/venv/bin/python {training['command'].split(' ', 1)[1]}\n```\n")
    a, m = training["arguments"], training["machine"]
    w(f"Next-word cross-entropy and nothing else, {a['steps']:,} steps of batch {a['batch']}, "
      f"{training['optimizer']}, peak {a['lr']}, no dropout, all seeds fixed: **{training['training_seconds'] / 60:.1f} "
      f"minutes** ({training['training_cpu_seconds'] / 60:.1f} minutes of CPU) on {m['cpu']}, "
      f"{m['torch_threads']} PyTorch thread, shared with other work (5-minute load average "
      f"{m['load_average_5min_at_end']} at the end) (torch {m['torch']}, transformers {m['transformers']}).\n")
    if jump and before:
        w(f"The loss sat on a plateau, and the next-word accuracy on the second r of 64 fixed 25-word repeats "
          f"(train.py's own check, not the probe below) stayed near chance ({before[-1]['second_r_accuracy']:.3f} at step {before[-1]['step']:,}), until the "
          f"induction head formed: {jump['second_r_accuracy']:.3f} at step {jump['step']:,}, "
          f"{curve[-1]['second_r_accuracy']:.3f} at the end. Every {a['log_every']} steps:\n")
    w("| step | loss | second-r accuracy |\n|---:|---:|---:|")
    for e in curve:
        if e["step"] % 1000 == 0 or e is curve[-1] or (jump and abs(e["step"] - jump["step"]) <= 500):
            w(f"| {e['step']:,} | {e['loss']:.3f} | {e['second_r_accuracy']:.3f} |")
    w("")

    w("## The heads\n")
    w(f"`training/tiny_induction/evaluate.py` loads the saved files into transformers (float32, eager attention, "
      "`output_attentions=True`) and scores every head with TransformerLens's head detector, its defaults "
      "kept (`error_measure=\"mul\"`, `exclude_bos=False`, `exclude_current_token=False`): for one sequence, "
      "score = Σ(A ⊙ D) / ΣA over the whole query × key matrix, D built from the sequence's own ids:\n")
    w("- previous token: D[i, i−1] = 1;")
    w("- induction: D[i, j] = 1 when token j−1 equals token i and j−1 < i (the duplicate-token pattern shifted one "
      "column to the right).\n")
    w(f"The probe: {ev['probe']['sequences']} sequences `<bos> r r`, r being {ev['definitions']['probe'].split(' r = ')[1].split(' drawn')[0]} "
      f"drawn without repeats from the vocabulary without punctuation or special tokens (seed {ev['probe_seed']}), "
      f"{ev['probe']['tokens']} tokens each, scored on the **full sequence** and averaged over the probe. Since ΣA over "
      f"the full matrix counts every row, rows with nothing to match keep the scores below 1: at most "
      f"{ceil['previous_token']:.3f} for previous token (the `<bos>` row has no previous word) and "
      f"{ceil['induction']:.3f} for induction (only the second r's {(ev['probe']['tokens'] - 1) // 2} rows have an "
      "earlier occurrence). The second table scores the second r's rows alone, where a perfect induction head "
      "scores 1.\n")
    lines = ["| layer, head | previous token | induction | induction, second r only | reads as |", "|---|---:|---:|---:|---|"]
    for l in range(L):
        for h in range(H):
            pv, iv = f"{p['previous_token'][l][h]:.3f}", f"{p['induction'][l][h]:.3f}"
            if (l, h) == (pl, ph):
                pv = f"**{pv}**"
            if (l, h) == (il, ih):
                iv = f"**{iv}**"
            lines.append(f"| layer {l}, head {h} | {pv} | {iv} | {p['induction_second_r'][l][h]:.3f} | {role(p, l, h)} |")
    w("\n".join(lines))
    w("")
    w("Beside them, to say what the other heads do (same formula, same probe): the share of weight on `<bos>`, "
      "on the current word, and TransformerLens's duplicate-token score (D[i, j] = 1 when token j equals token i, "
      "j < i).\n")
    lines = ["| layer, head | `<bos>` | current word | duplicate token |", "|---|---:|---:|---:|"]
    for l in range(L):
        for h in range(H):
            lines.append(f"| layer {l}, head {h} | {p['bos'][l][h]:.3f} | {p['current_token'][l][h]:.3f} | "
                         f"{p['duplicate_token'][l][h]:.3f} |")
    w("\n".join(lines))
    w("")
    ps = held["previous_token_on_sentences"]
    w(f"On held-out ordinary sentences (no repeat planted), the previous-token head (layer {pl}, head {ph}) scores "
      f"{ps[pl][ph]:.3f}: it does much the same on the template sentences as on random words.\n")

    w("## Which heads do what\n")
    w(f"- **layer {pl}, head {ph}: previous token.** Score {prev['score']:.3f} of a possible "
      f"{ceil['previous_token']:.3f}: on average {prev['score'] / ceil['previous_token']:.2f} of each row's weight "
      "(the `<bos>` row aside) is on the word just before.")
    w(f"- **layer {il}, head {ih}: induction.** Score {ind['score']:.3f} of a possible {ceil['induction']:.3f}: "
      f"from a word of the second r it puts on average {ind['score_second_r']:.2f} of its weight on the word that "
      "followed the same word in the first r, which is the word to predict next.")
    others = [(l, h) for l in range(L) for h in range(H) if (l, h) not in ((il, ih), (pl, ph))]
    named = [f"layer {l}, head {h} ({role(p, l, h)})" for l, h in others]
    w(f"- the others: " + "; ".join(named) + ".\n")
    w("`headmap.json` suggests the induction head for `decoder_self` (the explorer opens it first), then the "
      "previous-token head.\n")
    w("**These roles emerged from training; none was assigned.** The loss is next-word cross-entropy only; no "
      "weight was set by hand, no head was named or set up for a pattern, and no loss term sees an attention "
      "weight. The heads were found afterwards, by the scores above. Another seed could put the roles in other "
      "heads, split them over several, or form them later.\n")

    w("## Next-word accuracy\n")
    w("A prediction is right when the most likely next word is the word that comes next.\n")
    w("| text | predictions | accuracy |\n|---|---:|---:|")
    w(f"| probe `<bos> r r`: first r (words 2–{PROBE_N(ev)}) | {p['first_r']['items']} | {pct(p['first_r']['accuracy'])} |")
    w(f"| probe `<bos> r r`: second r (words 2–{PROBE_N(ev)}) | {p['second_r']['items']} | {pct(p['second_r']['accuracy'])} |")
    w(f"| held-out repeats, second r (r of 4–{training['corpus']['max_repeat']} words) | {held['repeat_second']['items']} | "
      f"{pct(held['repeat_second']['accuracy'])} |")
    w(f"| held-out span sequences: the span's first occurrence (words 2–k) | {held['span_first']['items']} | "
      f"{pct(held['span_first']['accuracy'])} |")
    w(f"| held-out span sequences: the span's second occurrence (words 2–k) | {held['span_second']['items']} | "
      f"{pct(held['span_second']['accuracy'])} |")
    for how, what in (("sentence", "a whole sentence repeated"), ("anywhere", "a span from anywhere")):
        w(f"| … of which {what}: first, second occurrence | {held[how + '_span_first']['items']} | "
          f"{pct(held[how + '_span_first']['accuracy'])}, {pct(held[how + '_span_second']['accuracy'])} |")
    w(f"| held-out ordinary sentences: every word | {held['sentences']['items']} | {pct(held['sentences']['accuracy'])} |")
    w("")
    w(f"Chance on a random word is 1 in {len(corpus.ordinary_words())}. The second r's first word is left out: "
      "it follows the last word of the first r, which has not occurred before, so nothing can be copied.\n")
    w("The held-out spans by how many of the span's words come before the predicted one (at the second "
      "occurrence, how many words have already been repeated):\n")
    w("| span words before it | sentence repeated: first | second | span from anywhere: first | second |\n"
      "|---:|---:|---:|---:|---:|")
    sent, anyw = held["span_by_words_seen"]["sentence"], held["span_by_words_seen"]["anywhere"]
    for seen in sent:
        a, b = sent[seen], anyw[seen]
        w(f"| {seen} | {pct(a['first']['accuracy'])} | {pct(a['second']['accuracy'])} | "
          f"{pct(b['first']['accuracy'])} | {pct(b['second']['accuracy'])} |")
    w("")

    w("## Where it fails\n")
    w(f"By length of r (50 sequences each; training's repeats had at most {training['corpus']['max_repeat']} words "
      f"and its sequences at most {trained} tokens):\n")
    w("| r | tokens | second-r accuracy | induction score (second r) | previous-token score |\n|---:|---:|---:|---:|---:|")
    for n, v in ev["repeat_lengths"].items():
        acc = pct(v["second_r"]["accuracy"])
        key_b, key_a = f"second_r_before_{trained}", f"second_r_from_{trained}"
        if key_a in v:
            acc += (f" ({pct(v[key_b]['accuracy'])} before position {trained}, "
                    f"{pct(v[key_a]['accuracy'])} from it on)")
        w(f"| {n} | {v['tokens']} | {acc} | {v['induction_second_r'][il][ih]:.3f} | {v['previous_token'][pl][ph]:.3f} |")
    w("")
    w(f"With unknown words (the probe's r with some words replaced by made-up ones, which the tokenizer turns "
      "into `<unk>`), second-r accuracy by row:\n")
    w("| unknown words in r | the row's word is known, the next is known | the row's word is `<unk>` | "
      "the next word is `<unk>` |\n|---:|---:|---:|---:|")
    for c, v in ev["unknown_words"].items():
        cells = [f"{pct(x['accuracy'])} of {x['items']}" for x in v.values()]
        w(f"| {c} | " + " | ".join(cells) + " |")
    w("")
    w(f"Repeats inside sentences (`copy_probes` in `evaluation.json`): the probability of the word a copy "
      f"would give, the most likely next word, and the weight the induction head (layer {il}, head {ih}) puts, from "
      "the last word, on the word that followed its earlier occurrence.\n")
    w("| text | copy | p(copy) | most likely next | induction head on the earlier next word |\n|---|---|---:|---|---|")
    for c in ev["copy_probes"]:
        copy = f"`{c['copy']}`" if c["copy"] else "— (two)"
        pc = f"{c['copy_probability']:.2f}" if c["copy"] else "—"
        on = ", ".join(f"`{t['token']}` {t['weight']:.2f}" for t in c["targets"])
        if all(t["token"] != c["top_key"] for t in c["targets"]):
            on += f" (largest: `{c['top_key']}` {c['top_key_weight']:.2f})"
        w(f"| `{c['text']}` | {copy} | {pc} | `{c['next'][0]['token']}` {c['next'][0]['probability']:.2f} | {on} |")
    w("")
    for line in notes(ev, heads, training):
        w(line)

    scored = ("the `induction` score on headmap's induction probe (`headmap heads --probe induction`: `<bos>`, "
              "then 50 random words twice, seed 0; its second 50 rows) and the `previous_token` score on the same "
              "text (every row)")
    note = ("The probe's 101 tokens run past the 96 positions training used, which keeps its induction scores below "
            "the card's above. ")
    for line in timeline.card_section(model_dir, "tiny_induction", scored=scored, note=note,
                                      accuracy="the second-r accuracy of train.py's check"):
        w(line)

    w("## Files\n")
    w("| file | sha256 |\n|---|---|")
    for name in FILES:
        w(f"| `{name}` | `{sha256(model_dir / name)}` |")
    w("")
    w("`training.json` records the command, arguments, time, machine and loss curve; `evaluation.json` every "
      "number above with its definition; `headmap.json` the suggested heads and the example's rows.\n")
    w("## Reproduce\n")
    w("```sh\npython3 -m venv /work/venv && /work/venv/bin/pip install torch transformers tokenizers safetensors numpy\n"
      "/work/venv/bin/python training/tiny_induction/train.py      # trains, saves, then runs evaluate.py\n"
      "/work/venv/bin/python training/tiny_induction/evaluate.py   # measures the saved files again\n```\n")
    w("With one thread a rerun gives the same weights on the same software; other versions of PyTorch or other "
      "CPUs may round differently, and the induction head may then form at another step or in another head.\n")

    w("## 요약\n")
    w(f"headmap에서 이전 토큰 헤드와 인덕션 헤드를 실제 학습된 모델로 보여 주려고 만든 GPT-2 구조의 작은 언어 모델입니다 "
      f"({L}층, 헤드 {H}개, 단어 {len(vocab)}개, {size / 1e6:.2f} MB). 같은 단어열이 다시 나오는 한국어·영어 생성 텍스트로 "
      f"다음 단어 예측만 학습했고, 역할은 정해 주지 않았습니다. 학습 뒤에 재 보니 {pl}층 {ph}번 헤드는 바로 앞 단어를 보고"
      f"(점수 {prev['score']:.3f}), {il}층 {ih}번 헤드는 현재 단어가 앞서 나왔던 자리의 다음 단어를 봅니다(점수 "
      f"{ind['score']:.3f}, 두 번째 반복 구간만 보면 {ind['score_second_r']:.3f}). 무작위 단어열 r을 되풀이하면 두 번째 r의 "
      f"다음 단어 정확도는 {pct(p['second_r']['accuracy'])}, 첫 번째 r에서는 {pct(p['first_r']['accuracy'])}입니다. "
      f"학습한 길이({trained} 토큰)를 넘는 위치나 어휘에 없는 단어(`<unk>`)에서는 잘 되지 않고, 문장 안의 짧은 반복"
      "(`고양이 가 잔다 . 고양이 가`)은 따라 하지 않습니다. "
      "한국어나 영어를 아는 모델이 아닙니다.\n")
    (model_dir / "README.md").write_text("\n".join(out))


def PROBE_N(ev):
    return (ev["probe"]["tokens"] - 1) // 2


def notes(ev, heads, training):
    """What the failure tables say, in words. The sentences were written by hand after reading
    the measurements; the numbers in them are read from evaluation.json, so they follow the file."""
    il, ih, pl, ph = heads["induction"]["layer"], heads["induction"]["head"], heads["previous_token"]["layer"], \
        heads["previous_token"]["head"]
    trained, positions = ev["shape"]["trained_positions"], ev["shape"]["positions"]
    lengths, held = ev["repeat_lengths"], ev["heldout"]
    long = lengths[str(max(int(n) for n in lengths))]
    n_long = max(int(n) for n in lengths)
    unk1 = ev["unknown_words"]["1"]
    probes = {c["text"]: c for c in ev["copy_probes"]}
    short = probes["고양이 가 잔다 . 고양이 가"]
    longer = probes["민수 가 사과 를 먹는다 . 민수 가 사과 를"]
    tom = probes["tom eats a red apple . tom eats a red"]
    cat = probes["the cat sleeps . the cat"]
    tom_best = max(((l, h, v) for l, row in enumerate(tom["weight_by_head"]) for h, v in enumerate(row)),
                   key=lambda t: t[2])
    sent2 = held["span_by_words_seen"]["sentence"]["2"]
    any2 = held["span_by_words_seen"]["anywhere"]["2"]
    ind2 = ev["probe"]["induction_second_r"]
    sharing = [h for h in range(len(ind2[il])) if ind2[il][h] >= 0.5]
    out = []
    out.append(
        f"**Past the trained length.** Training sequences had at most {trained} tokens, so rows {trained} to "
        f"{positions - 1} of the position table were never used and are still as initialized (Adam without weight "
        "decay leaves a row that gets no gradient where it was). With a {n}-word r, copying holds up to position "
        f"{trained - 1} ({pct(long[f'second_r_before_{trained}']['accuracy'])}) and breaks down from position "
        f"{trained} on ({pct(long[f'second_r_from_{trained}']['accuracy'])}); the previous-token head's score there "
        f"falls from {long[f'previous_token_rows_before_{trained}'][pl][ph]:.3f} to "
        f"{long[f'previous_token_rows_from_{trained}'][pl][ph]:.3f}. r longer than any repeat in training still "
        f"copies while it stays in the trained positions ({pct(lengths['40']['second_r']['accuracy'])} at 40 "
        f"words), though less well near their end ({pct(lengths['47']['second_r']['accuracy'])} at 47 words, "
        f"{lengths['47']['tokens']} tokens).\n".replace("{n}", str(n_long)))
    out.append(
        "**Unknown words.** `<unk>` never occurs in the training text: its row of the tied embedding table was only "
        "ever trained as an output to avoid, and has grown to "
        f"{ev['unk_embedding_norm_ratio']:.1f} times the mean norm of a word's. As an input it does not work as a "
        "word: from a row whose word is `<unk>` the model does not continue the copy, not even with a single "
        f"unknown word in r, where the match is unambiguous (0 of {unk1['unknown word (<unk>), next known']['items']}), "
        "and it never predicts `<unk>` itself. The known words of the same r are copied as before.\n")
    out.append(
        "**Inside sentences it copies less.** In random words the induction head's copy is nearly always right; "
        "inside sentences it is right only when the text happens to repeat itself, because the generated "
        "sentences are drawn independently from a small vocabulary, so a word that comes back (a subject, a "
        "particle like 가) is usually followed by something else the second time. The model seems to have learned "
        "this. Two words into a repeated sentence, usually just after its subject (`고양이 가`, `the cat`), it "
        "predicts the next word "
        f"right {pct(sent2['second']['accuracy'])} of the time (span from anywhere: {pct(any2['second']['accuracy'])}). "
        f"So `{short['text']}` does not go on with `{short['copy']}`: the induction head's row puts "
        f"{short['targets'][0]['weight']:.2f} on it and {short['top_key_weight']:.2f} on `{short['top_key']}`, and "
        f"the model's guesses are spread over what can follow 가 (`{short['next'][0]['token']}` "
        f"{short['next'][0]['probability']:.2f} is the most likely). After a longer match, `{longer['text']}`, "
        f"it copies: {longer['copy_probability']:.2f} on `{longer['copy']}`. The holding back is partly in the head "
        f"(above, it looks away from `{short['copy']}`) and partly after it: in `{cat['text']}` the head puts "
        f"{cat['targets'][0]['weight']:.2f} on `{cat['copy']}`, yet the model gives `{cat['copy']}` only "
        f"{cat['copy_probability']:.2f}.\n")
    if len(sharing) > 1:
        others = [h for h in sharing if h != ih]
        out.append(
            f"**The role is shared.** Layer {il}'s heads " + ", ".join(str(h) for h in sharing[:-1])
            + f" and {sharing[-1]} all score above 0.5 on the second r's rows; headmap.json names the highest. They "
            f"do not always agree: in `{tom['text']}` head {ih} looks at `{tom['top_key']}` "
            f"({tom['top_key_weight']:.2f}), while layer {tom_best[0]}, head {tom_best[1]} puts {tom_best[2]:.2f} "
            f"on `{tom['copy']}`, and the model copies ({tom['copy_probability']:.2f}). "
            + ("Heads " + " and ".join(str(h) for h in others) + " are" if len(others) > 1 else f"Head {others[0]} is")
            + " worth opening beside it.\n")
    return out
