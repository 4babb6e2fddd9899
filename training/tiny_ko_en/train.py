#!/usr/bin/env python3
"""Trains headmap-tiny-ko-en: a tiny Marian-layout Korean → English encoder–decoder on the
generated corpus of corpus.py, and saves it where headmap reads it.

The loss is the translation's cross-entropy plus a word-gloss cross-entropy on the encoder's
last states (see gloss_labels): each Korean word should already say which English word it
becomes, and for a pronoun that is its referent's name. Attention weights are in no loss term
and no head is singled out; the gloss loss only gives the encoder a reason to bring the
antecedent to the pronoun. `--gloss-weight 0` trains on translation alone (the model card
compares the two).

Not run in CI (it needs PyTorch and transformers). From the repository root:

    python3 -m venv /work/venv && /work/venv/bin/pip install torch transformers tokenizers safetensors
    /work/venv/bin/python training/tiny_ko_en/train.py          # train, save, then evaluate.py
    TINY_KO_EN_THREADS=2 /work/venv/bin/python training/tiny_ko_en/train.py   # more threads

It writes www/models/headmap-tiny-ko-en/: config.json, generation_config.json,
model.safetensors (f16), tokenizer.json and training.json (the loss curve, time and machine),
then runs evaluate.py, which measures the saved weights and writes the rest (heldout.json,
headmap.json, the model card and the parity reference in tests/fixtures/hf/tiny-ko-en/).

With --timeline it also records, every 10 steps, the heads' scores and an accuracy on the
weights rounded to f16, and writes OUT/timeline/ (timeline.json and f16 checkpoints, chosen
by write_timeline below; see training/timeline.py). The recording reads a copy of the model
and draws no random numbers, so the weights come out as without it.

Everything is seeded. With one thread (the default) a rerun gives the same weights; more
threads may change the last bits of the sums and so, slightly, the weights.
"""

import argparse
import json
import math
import os
import pathlib
import platform
import random
import sys
import time

import torch
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import MarianConfig, MarianMTModel, PreTrainedTokenizerFast

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402  (the generator sits beside this script)
import timeline  # noqa: E402  (training/timeline.py, shared with tiny_induction)

OUT = ROOT / "www" / "models" / "headmap-tiny-ko-en"
SPECIALS = ["<pad>", "<unk>", "<s>", "</s>"]  # ids 0, 1, 2, 3
PAD, UNK, START, EOS = range(4)

# The architecture: small enough for a blog widget (≈ 0.6 MB in f16); three encoder layers so
# that a pronoun can first gather its predicate and then look for the noun that fits both.
ARCH = dict(d_model=64, encoder_layers=3, decoder_layers=2, encoder_attention_heads=4,
            decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256,
            max_position_embeddings=64, activation_function="relu")


def train_tokenizer(train):
    """WordPiece over whitespace and punctuation, trained on the corpus.

    The trainer sees the English side as running text, and the Korean side as its list of
    distinct word forms: inflected nouns once each (동물이, 동물을, 동물은 …), words that never
    change in this corpus (verbs, adjectives, adverbs) twice. With min_frequency 2 a merge
    then needs two different word forms to share it, so stems (동물) and particles (##에게)
    become pieces but a noun glued to its particle (동물이) does not, while the fixed words
    stay whole. Every character starts as a piece, so no corpus text becomes <unk>.
    """
    forms = {}
    for e in train:
        for w in e["source_words"]:
            forms[w["text"]] = "stem" in w and w["stem"] != w["text"]
    korean = [w for w, inflected in sorted(forms.items()) for _ in range(1 if inflected else 2)]
    texts = [" ".join(korean)] + [e["target"] for e in train]

    def wordpiece(vocab=None):
        tok = Tokenizer(models.WordPiece(vocab, unk_token="<unk>") if vocab else models.WordPiece(unk_token="<unk>"))
        tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        return tok

    trained = wordpiece()
    trainer = trainers.WordPieceTrainer(vocab_size=2000, min_frequency=2, special_tokens=SPECIALS, show_progress=False)
    trained.train_from_iterator(texts, trainer)

    # The trainer keeps its counts in hash maps, so its ids, and which intermediate pieces
    # (dangerou, ##rtle …) survive, change from run to run. Keeping the alphabet and the pieces
    # the corpus's words actually split into, in a fixed order, makes the tokenizer (and so
    # the model trained on its ids) reproducible; WordPiece's longest match splits every
    # corpus word exactly as before.
    words = sorted({w for t in texts for w, _ in trained.pre_tokenizer.pre_tokenize_str(t)})
    used = {piece for w in words for piece in trained.encode(w, add_special_tokens=False).tokens}
    alphabet = {p for p in trained.get_vocab() if len(p.removeprefix("##")) == 1}
    pieces = sorted((used | alphabet) - set(SPECIALS), key=lambda p: (p.startswith("##"), len(p), p))
    tok = wordpiece({p: i for i, p in enumerate(SPECIALS + pieces)})
    # registered as special (they keep ids 0–3): decoding leaves them out, and "</s>" typed
    # in a text is the end token, not four characters
    tok.add_special_tokens(SPECIALS)
    assert [tok.token_to_id(s) for s in SPECIALS] == [PAD, UNK, START, EOS]
    assert all(tok.encode(w).tokens == trained.encode(w).tokens for w in words)
    # Marian's convention: every sequence ends in </s>; no start token on the source side
    tok.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", EOS)])
    tok.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    return tok


def fast_tokenizer(tok):
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>",
                                   bos_token="<s>", eos_token="</s>")


def shift_right(labels):
    """transformers' shift_tokens_right: the decoder sees the start token, then the labels
    without their last position."""
    dec = labels.new_full(labels.shape, PAD)
    dec[:, 1:] = labels[:, :-1]
    dec[:, 0] = START
    return dec


def encode(fast, examples):
    """Source ids, label ids (both ending in </s>), padded with <pad>."""
    src = fast([e["source"] for e in examples], padding=True, return_tensors="pt")
    tgt = fast([e["target"] for e in examples], padding=True, return_tensors="pt")
    return src["input_ids"], src["attention_mask"], tgt["input_ids"]


def gloss_labels(fast, examples, width):
    """For each source token, the English word its Korean word becomes in the reference
    translation (on the word's first token; -100 elsewhere): 동물이 → animal, 피곤했다 → tired,
    and a pronoun → the referent it is translated as (그것은 → animal)."""
    labels = torch.full((len(examples), width), -100, dtype=torch.long)
    for n, e in enumerate(examples):
        enc = fast(e["source"], return_offsets_mapping=True, return_special_tokens_mask=True)
        for en_i, ko_i in e["alignment"]:
            word, ko = e["target_words"][en_i], e["source_words"][ko_i]
            first = next(i for i, ((s, t), sp) in enumerate(zip(enc["offset_mapping"], enc["special_tokens_mask"]))
                         if not sp and s < ko["end"] and t > ko["start"])
            labels[n, first] = fast.convert_tokens_to_ids(word["text"])
    return labels


def batches(n, size, rng):
    order = list(range(n))
    rng.shuffle(order)
    for i in range(0, n, size):
        yield order[i:i + size]


def trim(ids, mask=None):
    """Drops the columns that are padding in every row of a batch."""
    keep = int((ids != PAD).sum(1).max())
    return ids[:, :keep] if mask is None else (ids[:, :keep], mask[:, :keep])


def teacher_forced_accuracy(model, fast, examples):
    model.eval()
    src, mask, labels = encode(fast, examples)
    with torch.no_grad():
        logits = model(input_ids=src, attention_mask=mask, decoder_input_ids=shift_right(labels)).logits
    valid = labels != PAD
    model.train()
    return float(((logits.argmax(-1) == labels) & valid).sum() / valid.sum())


def lr_at(step, total, peak, warmup):
    if step < warmup:
        return peak * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return peak * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * progress)))


# --- the training timeline (--timeline): see training/timeline.py ---

def seed_positions(fast):
    """The seed sentence's ids, and the positions of 그것's tokens (queries) and 동물's (keys):
    the stems, not their particles, as evaluate.py measures coreference."""
    enc = fast(corpus.SEED_ANIMAL_KO)
    tokens = fast.convert_ids_to_tokens(enc["input_ids"])
    queries = [i for i, t in enumerate(tokens) if t == "그것"]
    keys = [i for i, t in enumerate(tokens) if t == "동물"]
    assert queries and keys, tokens
    return enc["input_ids"], queries, keys


def timeline_info(fast, steps_per_epoch):
    _, queries, keys = seed_positions(fast)
    return {
        "steps_per_epoch": steps_per_epoch,  # for write_timeline; timeline.json leaves it out
        "probe": {"text": corpus.SEED_ANIMAL_KO, "place": "encoder", "queries": queries, "keys": keys},
        "scores": [{"name": "mass", "en": "그것 → 동물", "ko": "그것 → 동물"}],
        "accuracy": {
            "en": "teacher-forced next-token accuracy on 200 held-out pairs (the reference's tokens, </s> included, "
                  "that the decoder ranks first given the source and the reference before them)",
            "ko": "학습에 쓰지 않은 문장 쌍 200개에서 교사 강요(teacher forcing)로 잰 다음 토큰 정확도: 원문과 앞선 "
                  "정답 토큰을 주었을 때 정답 토큰(</s> 포함)을 1순위로 고른 비율",
        },
    }


def timeline_measure(fast, check):
    """The recorder's measure: held-out teacher-forced accuracy, and per encoder layer and head
    the mean over 그것's tokens of the weight on 동물's tokens in the seed sentence, as `headmap
    heads --text SEED --queries Q --keys K` gives it (src/heads/mod.rs, mass)."""
    ids, queries, keys = seed_positions(fast)
    x = torch.tensor([ids])

    def measure(shadow):
        attentions = shadow.get_encoder()(input_ids=x, output_attentions=True).attentions  # L × (1, H, T, T)
        mass = [a[0][:, queries][:, :, keys].double().sum(-1).mean(-1).tolist() for a in attentions]  # (L, H)
        return teacher_forced_accuracy(shadow, fast, check), {"mass": mass}
    return measure


def write_timeline(record, folder, out):
    """OUT/timeline/ from the record, where everything happens in the first epoch: the curve
    every 10 steps through it, every 50 after. 9 checkpoints (f16, ≈ 620 KB each: as many as
    fit in 6 MB): step 0, the last step, and 7 over the first epoch, evenly on a log scale
    from where the training loss (the mean of 10 steps) is first below 3/4 of the first step's
    to the epoch's end, the one nearest the phase change moved onto it."""
    points, last, epoch = record["points"], record["steps"], record["info"]["steps_per_epoch"]
    final = timeline.best(points[-1]["scores"], "mass")
    phase = timeline.first_step(points, lambda p: timeline.best(p["scores"], "mass") >= final / 2)
    losses = record["losses"]
    falling = next(s for s in range(10, last, 10) if sum(losses[s - 10:s]) / 10 < 0.75 * losses[0])
    end = 10 * round(epoch / 10)
    spread = [10 * round(falling * (end / falling) ** (k / 6) / 10) for k in range(7)]
    spread[min(range(7), key=lambda k: abs(spread[k] - phase))] = phase
    steps = timeline.thinned(points, 0, end, last)
    timeline.write(record, folder, out, model="headmap-tiny-ko-en",
                   written_by="python3 training/tiny_ko_en/train.py --timeline",
                   points=steps, checkpoints=sorted({0, last, *spread}),
                   phase_change={"step": phase,
                                 "en": "the first scored step at which the best encoder head's 그것 → 동물 mass reaches "
                                       "half of its value at the last step",
                                 "ko": "가장 높은 인코더 헤드의 그것 → 동물 질량이 처음으로 마지막 단계 값의 절반에 이르는 측정 단계"})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    ap.add_argument("--epochs", type=int, default=6)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--n-train", type=int, default=60000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--gloss-weight", type=float, default=0.5,
                    help="weight of the encoder's word-gloss loss (0: translation loss only)")
    ap.add_argument("--threads", type=int, default=int(os.environ.get("TINY_KO_EN_THREADS", "1")))
    ap.add_argument("--no-eval", action="store_true", help="skip evaluate.py after saving")
    ap.add_argument("--timeline", action="store_true",
                    help="also record the heads and loss as it trains and write OUT/timeline/ (see timeline_info)")
    ap.add_argument("--timeline-every", type=int, default=10, help="steps between recorded points")
    ap.add_argument("--timeline-record", type=pathlib.Path,
                    default=pathlib.Path("/tmp/headmap-timeline-tiny-ko-en"),
                    help="scratch folder for every recorded point's f16 weights and record.json")
    ap.add_argument("--rewrite-timeline", action="store_true",
                    help="no training: write OUT/timeline/ again from --timeline-record")
    args = ap.parse_args()
    if args.rewrite_timeline:
        write_timeline(timeline.load(args.timeline_record), args.timeline_record, args.out)
        return

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    started = time.time()

    train, heldout = corpus.build_splits(n_train=args.n_train)
    tok = train_tokenizer(train)
    fast = fast_tokenizer(tok)
    for e in heldout:
        for text in (e["source"], e["target"]):
            assert UNK not in tok.encode(text).ids, f"<unk> in {text}"
    print(f"corpus: {len(train)} training, {len(heldout)} held out; vocabulary {tok.get_vocab_size()}")

    config = MarianConfig(
        vocab_size=tok.get_vocab_size(), decoder_vocab_size=tok.get_vocab_size(), **ARCH,
        dropout=0.1, attention_dropout=0.0, activation_dropout=0.0, scale_embedding=True,
        share_encoder_decoder_embeddings=True, tie_word_embeddings=True,
        pad_token_id=PAD, bos_token_id=START, eos_token_id=EOS, decoder_start_token_id=START,
        forced_eos_token_id=EOS)
    model = MarianMTModel(config)
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print(f"model: {n_params} trainable parameters")

    src_all, mask_all, labels_all = encode(fast, train)
    gloss_all = gloss_labels(fast, train, src_all.size(1))
    check = heldout[2:202]
    steps_per_epoch = math.ceil(len(train) / args.batch)
    total = steps_per_epoch * args.epochs
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), weight_decay=0.01)
    recorder = None
    if args.timeline:
        recorder = timeline.Recorder(model, args.timeline_record, args.timeline_every, total,
                                     timeline_measure(fast, check), timeline_info(fast, steps_per_epoch))
        recorder.shadow.set_attn_implementation("eager")  # the shadow's weights are read out
    loss_fn = torch.nn.CrossEntropyLoss(ignore_index=-100)
    log, step = [], 0
    model.train()
    for epoch in range(args.epochs):
        t0, running, count = time.time(), 0.0, 0
        for idx in batches(len(train), args.batch, rng):
            if recorder and recorder.due(step):
                recorder.take(step, model)
            src, mask = trim(src_all[idx], mask_all[idx])
            labels = trim(labels_all[idx])
            gloss = gloss_all[idx][:, :src.size(1)]
            for group in opt.param_groups:
                group["lr"] = lr_at(step, total, args.lr, warmup=300)
            out = model(input_ids=src, attention_mask=mask, decoder_input_ids=shift_right(labels))
            target = labels.masked_fill(labels == PAD, -100)
            loss = loss_fn(out.logits.reshape(-1, out.logits.size(-1)), target.reshape(-1))
            if args.gloss_weight:
                # the same tied output layer reads the encoder's last states: each Korean word
                # should already say which English word it becomes (see gloss_labels)
                gloss_logits = model.lm_head(out.encoder_last_hidden_state) + model.final_logits_bias
                loss = loss + args.gloss_weight * loss_fn(gloss_logits.reshape(-1, gloss_logits.size(-1)), gloss.reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            value = loss.item()
            running, count, step = running + value, count + 1, step + 1
            if recorder:
                recorder.loss(value)
        acc = teacher_forced_accuracy(model, fast, check)
        entry = {"epoch": epoch + 1, "loss": running / count, "heldout_token_accuracy": acc,
                 "seconds": time.time() - t0}
        log.append(entry)
        print(f"epoch {epoch + 1}: loss {entry['loss']:.4f}, held-out token accuracy {acc:.4f}, {entry['seconds']:.0f} s", flush=True)
    if recorder:
        recorder.take(step, model)
    train_seconds = time.time() - started
    # other work on the machine slows training down: say how busy it was
    load = round(os.getloadavg()[1], 2)

    args.out.mkdir(parents=True, exist_ok=True)
    tok.save(str(args.out / "tokenizer.json"))
    model.eval()
    # generate() as headmap runs it: up to 63 new tokens (the position table holds 64)
    model.generation_config.max_length = config.max_position_embeddings
    # f16 halves the file; evaluate.py measures the model reloaded from these rounded weights
    model.to(torch.float16).save_pretrained(args.out, safe_serialization=True)
    info = {
        "command": "python3 " + " ".join([str(pathlib.Path(sys.argv[0]).resolve().relative_to(ROOT))] + sys.argv[1:]),
        "arguments": {k: str(v) if isinstance(v, pathlib.Path) else v for k, v in vars(args).items() if k != "out"},
        "training_seconds": round(train_seconds, 1),
        "machine": {"cpu": cpu_name(), "torch_threads": args.threads, "load_average_5min_at_end": load,
                    "python": platform.python_version(),
                    "torch": torch.__version__, "transformers": __import__("transformers").__version__,
                    "tokenizers": __import__("tokenizers").__version__},
        "corpus": {"train": len(train), "heldout": len(heldout)},
        "trainable_parameters": n_params,
        "epochs": log,
    }
    (args.out / "training.json").write_text(json.dumps(info, ensure_ascii=False, indent=1) + "\n")
    size = (args.out / "model.safetensors").stat().st_size
    print(f"saved {args.out} (model.safetensors {size} bytes) after {train_seconds:.0f} s")
    if recorder:
        write_timeline(timeline.load(recorder.save()), args.timeline_record, args.out)
    if not args.no_eval:
        import evaluate
        evaluate.main(["--model", str(args.out)])


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip() + f" ({os.cpu_count()} cores)"
    except OSError:
        pass
    return platform.processor() or platform.machine()


if __name__ == "__main__":
    main()
