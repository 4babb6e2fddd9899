#!/usr/bin/env python3
"""Trains headmap-tiny-induction: a two-layer GPT-2-layout language model over a word-level
Korean and English vocabulary, on text in which spans of words come back (corpus.py), and
saves it where headmap reads it.

From a fresh clone, at the repository root (the venv needs torch, transformers, tokenizers,
safetensors and numpy):

    python3 -m venv /work/venv && /work/venv/bin/pip install torch transformers tokenizers safetensors numpy
    /work/venv/bin/python training/tiny_induction/train.py       # train, save, then evaluate.py
    /work/venv/bin/python training/tiny_induction/evaluate.py    # measure the saved files again

It writes www/models/headmap-tiny-induction/: tokenizer.json, tokenizer_config.json, config.json,
generation_config.json, model.safetensors (f32) and training.json (arguments, time, machine,
loss curve), then runs evaluate.py, which measures the saved model and writes evaluation.json,
headmap.json and the model card (README.md, through card.py).

The loss is next-word cross-entropy and nothing else. No attention weight is in the loss and
no head is set up or singled out: which heads come to look at the previous word, and which
at the word after an earlier occurrence of the current one, is found afterwards by measuring.

With --timeline it also records, every 10 steps, the heads' scores and an accuracy on the
weights rounded to f16, and writes OUT/timeline/ (timeline.json and f16 checkpoints, chosen
by write_timeline below; see training/timeline.py). The recording reads a copy of the model
and draws no random numbers, so the weights come out as without it.

Everything is seeded: the text stream, the initial weights, the order. With one PyTorch thread
(the default) a rerun on the same software gives the same weights.
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
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
from transformers import GenerationConfig, GPT2Config, GPT2LMHeadModel
from transformers.utils import logging

logging.set_verbosity_error()  # the padding warning: pads only follow real words, see batch_ids

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
import corpus  # noqa: E402  (the generator sits beside this script)
import timeline  # noqa: E402  (training/timeline.py, shared with tiny_ko_en)

OUT = ROOT / "www" / "models" / "headmap-tiny-induction"
SPECIALS = ["<unk>", "<pad>", "<bos>"]  # ids 0, 1, 2
UNK, PAD, BOS = range(3)

# GPT-2's layout at toy size: two layers are the fewest in which an induction head can form
# (a head in layer 0 must first move each word's identity one position on); 128 positions, of
# which training uses the first corpus.MAX_TOKENS.
ARCH = dict(n_layer=2, n_head=4, n_embd=64, n_inner=256, n_positions=128, activation_function="gelu_new")


def build_tokenizer():
    """A word-level tokenizer over the corpus's words: <unk>, <pad>, <bos>, then every word in
    corpus.vocabulary()'s fixed order. Input is NFC-normalized and lower-cased, split into
    words and punctuation (Whitespace: \\w+ or a run of other non-space characters), and gets
    <bos> in front. A word outside the vocabulary becomes <unk>."""
    vocab = {w: i for i, w in enumerate(SPECIALS + corpus.vocabulary())}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    # registered as special: they keep ids 0–2, decoding leaves them out, and "<bos>" typed in a
    # text is the token, not three pieces
    tok.add_special_tokens(SPECIALS)
    tok.post_processor = processors.TemplateProcessing(
        single="<bos> $A", pair="<bos> $A $B:1", special_tokens=[("<bos>", BOS)])
    assert [tok.token_to_id(s) for s in SPECIALS] == [UNK, PAD, BOS]
    for w in corpus.vocabulary():
        assert tok.encode(w).tokens == ["<bos>", w], w
    return tok


def save_tokenizer(tok, out):
    """tokenizer.json, and a tokenizer_config.json naming the plain fast tokenizer: without it
    transformers' AutoTokenizer takes the class from config.json's model_type (GPT-2's byte-level
    BPE) and reads this word-level file wrongly."""
    tok.save(str(out / "tokenizer.json"))
    settings = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<bos>", "eos_token": "<bos>",
                "pad_token": "<pad>", "unk_token": "<unk>", "model_max_length": ARCH["n_positions"]}
    (out / "tokenizer_config.json").write_text(json.dumps(settings, indent=1) + "\n")


def stream(rng, skip):
    """Training sequences, endlessly, leaving out any whose text is held out."""
    while True:
        seq = corpus.sample(rng)
        if seq["text"] not in skip:
            yield seq


def batches(sequences, size, rng, group=8):
    """Batches of `size` sequences. Each `group` batches' worth is sorted by length before it
    is cut, so a batch holds sequences of about one length and little padding; the batches
    then come in a shuffled order."""
    while True:
        pool = sorted((next(sequences) for _ in range(size * group)), key=lambda s: len(s["words"]))
        cut = [pool[i:i + size] for i in range(0, len(pool), size)]
        rng.shuffle(cut)
        yield from cut


def batch_ids(tok, seqs):
    """(B, T) ids, <bos> first, padded with <pad> at the end; the pads are never attended to by
    a real position (the mask is causal) and carry no loss."""
    encoded = [e.ids for e in tok.encode_batch([s["text"] for s in seqs])]
    width = max(map(len, encoded))
    assert width <= corpus.MAX_TOKENS, width
    ids = torch.full((len(encoded), width), PAD, dtype=torch.long)
    for i, e in enumerate(encoded):
        ids[i, :len(e)] = torch.tensor(e)
    return ids


def next_word_loss(model, ids):
    logits = model(input_ids=ids).logits[:, :-1]  # (B, T-1, V): row t predicts ids[:, t+1]
    target = ids[:, 1:].masked_fill(ids[:, 1:] == PAD, -100)
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1), ignore_index=-100)


def lr_at(step, total, peak, warmup, decay=0.2):
    """Linear warmup, the peak held, then a cosine down to 10 % over the last `decay` of the
    steps. Holding the peak keeps a shorter run identical to a longer one until its decay."""
    if step < warmup:
        return peak * (step + 1) / warmup
    start = int(total * (1 - decay))
    if step < start:
        return peak
    progress = (step - start) / max(1, total - start)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def repeat_accuracy(model, tok, probe):
    """Next-word accuracy on the second r of `<bos> r r` (words 2 to n, which only copying can
    predict): a quick look during training; evaluate.py measures it properly."""
    ids = batch_ids(tok, probe)
    n = probe[0]["span"]
    model.eval()
    with torch.no_grad():
        pred = model(input_ids=ids).logits.argmax(-1)  # (B, T)
    model.train()
    # ids: <bos> r_0..r_{n-1} r_0..r_{n-1}; row t predicts ids[t+1]; the second r_1.. are at n+2..2n
    rows = torch.arange(n + 1, 2 * n)
    return float((pred[:, rows] == ids[:, rows + 1]).float().mean())


# --- the training timeline (--timeline): see training/timeline.py ---

def headmap_probe_ids(tok, length=50, seed=0):
    """The ids `headmap heads --probe induction` runs (src/heads/probe.rs, its defaults): <bos>,
    then r — `length` ids drawn by SplitMix64(seed) from the ordinary ids (every id but the
    special tokens), as ordinary[next % count] — then r again."""
    special = {tok.token_to_id(s) for s in SPECIALS}
    ordinary = [i for i in range(tok.get_vocab_size()) if i not in special]
    state, r = seed, []
    mask = (1 << 64) - 1
    for _ in range(length):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        r.append(ordinary[(z ^ (z >> 31)) % len(ordinary)])
    return [BOS] + r + r


def timeline_info(tok):
    ids = headmap_probe_ids(tok)
    text = " ".join(tok.id_to_token(i) for i in ids[1:])
    assert tok.encode(text).ids == ids, "the probe's text must read back as its ids"
    return {
        "probe": {"text": text, "place": "decoder_self", "queries": None, "keys": None},
        "scores": [{"name": "induction", "en": "induction", "ko": "인덕션"},
                   {"name": "previous_token", "en": "previous token", "ko": "이전 토큰"}],
        "accuracy": {
            "en": "next-word accuracy on the second r of 64 sequences <bos> r r (r: 25 different random words, "
                  "random.Random(100 + n)): the words only copying can predict",
            "ko": "<bos> r r 꼴의 64개 열(r: 서로 다른 무작위 단어 25개, random.Random(100 + n))에서 두 번째 r의 "
                  "다음 단어 정확도: 베껴 와야만 맞힐 수 있는 단어들",
        },
    }


def pattern_score(attn, rows, pattern):
    """headmap's pattern score (src/heads/cells.rs, metric mul, nothing excluded) of each head
    of one causal layer, attn (H, T, T): Σ over `rows` of the weight on the pattern's keys,
    over Σ of the rows' weight on the keys they see (j ≤ i). In f64, as headmap adds rows."""
    a = attn.double()
    on = sum(a[:, i, pattern(i)].sum(-1) for i in rows if pattern(i))
    total = sum(a[:, i, :i + 1].sum(-1) for i in rows)
    return (on / total).tolist()


def timeline_measure(tok, probe):
    """The recorder's measure: the probe's second-r accuracy, and per layer and head the
    induction score over the headmap probe's second r and the previous-token score over all
    its rows (<bos> included), as `headmap heads --probe induction` and `headmap heads --text
    PROBE --score previous_token` give them."""
    ids = headmap_probe_ids(tok)
    n = (len(ids) - 1) // 2
    second = range(1 + n, len(ids))
    induction = lambda i: [j for j in range(1, i + 1) if ids[j - 1] == ids[i]]  # noqa: E731
    previous = lambda i: [i - 1] if i > 0 else []  # noqa: E731
    x = torch.tensor([ids])

    def measure(shadow):
        attentions = shadow(input_ids=x, output_attentions=True).attentions  # L × (1, H, T, T)
        scores = {"induction": [pattern_score(a[0], second, induction) for a in attentions],
                  "previous_token": [pattern_score(a[0], range(len(ids)), previous) for a in attentions]}
        return repeat_accuracy(shadow, tok, probe), scores
    return measure


# what the phase change asks of a scored step (headmap train's rule, src/train/timeline.rs)
PHASE_ACCURACY, PHASE_INDUCTION = 0.6, 0.5


def write_timeline(record, folder, out):
    """OUT/timeline/ from the record. The curve: every 10 steps from where second-r accuracy
    first reaches 0.05 to where it reaches 0.95 (or to the phase change, if later), every 50
    elsewhere. 20 checkpoints: step 0, the last step, the phase change, the first steps at
    which accuracy reaches 1/12, 2/12 … 11/12, and 3 evenly before that stretch and 3 after."""
    points, last = record["points"], record["steps"]
    acc = lambda level: timeline.first_step(points, lambda p: p["accuracy"] >= level)  # noqa: E731
    phase = timeline.first_step(points, lambda p: p["accuracy"] >= PHASE_ACCURACY
                                and timeline.best(p["scores"], "induction") >= PHASE_INDUCTION)
    lo, hi = acc(0.05), max(acc(0.95), phase)
    steps = timeline.thinned(points, lo, hi, last)
    rising = [acc(k / 12) for k in range(1, 12)]
    checkpoints = sorted({0, last, phase, *rising, *timeline.evenly(0, rising[0], 3),
                          *timeline.evenly(phase, last, 3)})
    timeline.write(record, folder, out, model="headmap-tiny-induction",
                   written_by="python3 training/tiny_induction/train.py --timeline",
                   points=steps, checkpoints=checkpoints,
                   phase_change={"step": phase,
                                 "en": f"the first scored step at which second-r accuracy is at least {PHASE_ACCURACY} "
                                       f"and the best head's induction score at least {PHASE_INDUCTION}",
                                 "ko": f"두 번째 r 정확도가 {PHASE_ACCURACY} 이상이고 가장 높은 헤드의 인덕션 점수가 "
                                       f"{PHASE_INDUCTION} 이상이 되는 첫 측정 단계"})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, default=OUT)
    ap.add_argument("--steps", type=int, default=9000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--log-every", type=int, default=250)
    ap.add_argument("--threads", type=int, default=int(os.environ.get("TINY_INDUCTION_THREADS", "1")))
    ap.add_argument("--no-eval", action="store_true", help="skip evaluate.py after saving")
    ap.add_argument("--timeline", action="store_true",
                    help="also record the heads and loss as it trains and write OUT/timeline/ (see timeline_info)")
    ap.add_argument("--timeline-every", type=int, default=10, help="steps between recorded points")
    ap.add_argument("--timeline-record", type=pathlib.Path,
                    default=pathlib.Path("/tmp/headmap-timeline-tiny-induction"),
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
    started, cpu_started = time.time(), time.process_time()

    tok = build_tokenizer()
    heldout = corpus.heldout()
    skip = {s["text"] for s in heldout}
    probe = [corpus.repeat_sequence(random.Random(100 + i), 25) for i in range(64)]
    for p in probe:
        p["text"] = " ".join(p["words"])
    print(f"vocabulary {tok.get_vocab_size()} ({len(corpus.korean_words())} Korean words, "
          f"{len(corpus.english_words())} English, {len(corpus.PUNCTUATION)} punctuation, {len(SPECIALS)} special)")

    config = GPT2Config(vocab_size=tok.get_vocab_size(), **ARCH, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                        tie_word_embeddings=True, bos_token_id=BOS, eos_token_id=BOS, pad_token_id=PAD)
    model = GPT2LMHeadModel(config)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params} parameters")

    recorder = None
    if args.timeline:
        recorder = timeline.Recorder(model, args.timeline_record, args.timeline_every, args.steps,
                                     timeline_measure(tok, probe), timeline_info(tok))
        recorder.shadow.set_attn_implementation("eager")  # the shadow's weights are read out
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98))
    data = batches(stream(rng, skip), args.batch, rng)
    log, running, count, seen = [], 0.0, 0, {k: 0 for k, _ in corpus.MIX}
    t0 = time.time()
    model.train()
    for step in range(args.steps):
        if recorder and recorder.due(step):
            recorder.take(step, model)
        seqs = next(data)
        for s in seqs:
            seen[s["kind"]] += 1
        ids = batch_ids(tok, seqs)
        for group in opt.param_groups:
            group["lr"] = lr_at(step, args.steps, args.lr, args.warmup)
        loss = next_word_loss(model, ids)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        value = loss.item()
        running, count = running + value, count + 1
        if recorder:
            recorder.loss(value)
        if (step + 1) % args.log_every == 0 or step + 1 == args.steps:
            acc = repeat_accuracy(model, tok, probe)
            entry = {"step": step + 1, "loss": round(running / count, 4), "second_r_accuracy": round(acc, 4),
                     "seconds": round(time.time() - t0, 1)}
            log.append(entry)
            print(f"step {step + 1}: loss {entry['loss']:.4f}, second-r accuracy {acc:.3f}, {entry['seconds']:.0f} s",
                  flush=True)
            running, count = 0.0, 0
    if recorder:
        recorder.take(args.steps, model)
    train_seconds, cpu_seconds = time.time() - started, time.process_time() - cpu_started
    load = round(os.getloadavg()[1], 2)  # other work on the machine slows training: say how busy it was

    args.out.mkdir(parents=True, exist_ok=True)
    save_tokenizer(tok, args.out)
    model.eval()
    model.generation_config = GenerationConfig(bos_token_id=BOS, eos_token_id=BOS, pad_token_id=PAD,
                                               max_length=config.n_positions, do_sample=False)
    model.save_pretrained(args.out, safe_serialization=True)  # f32: about 0.5 MB, so no need to round
    info = {
        "command": "python3 " + " ".join([str(pathlib.Path(sys.argv[0]).resolve().relative_to(ROOT))] + sys.argv[1:]),
        "arguments": {k: str(v) if isinstance(v, pathlib.Path) else v for k, v in vars(args).items() if k != "out"},
        "optimizer": "Adam (betas 0.9, 0.98, no weight decay), gradients clipped to norm 1; learning rate: linear warmup, "
                     "held at the peak, then a cosine down to 10 % of it over the last fifth of the steps",
        "architecture": ARCH | {"dropout": 0.0, "tie_word_embeddings": True},
        "corpus": {"mix": dict(corpus.MIX), "max_tokens": corpus.MAX_TOKENS, "max_repeat": corpus.MAX_REPEAT,
                   "max_span": corpus.MAX_SPAN, "sequences_seen": seen, "heldout": len(heldout)},
        "training_seconds": round(train_seconds, 1),
        "training_cpu_seconds": round(cpu_seconds, 1),
        "machine": {"cpu": cpu_name(), "torch_threads": args.threads, "load_average_5min_at_end": load,
                    "python": platform.python_version(), "torch": torch.__version__,
                    "transformers": __import__("transformers").__version__,
                    "tokenizers": __import__("tokenizers").__version__},
        "parameters": n_params,
        "vocabulary": tok.get_vocab_size(),
        "loss_curve": log,
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
