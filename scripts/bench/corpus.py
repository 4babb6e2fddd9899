#!/usr/bin/env python3
"""Sentences per second over a corpus, every head's scores: headmap.corpus.scores natively on
one and two threads, headmap.ray.scores with one and two local actors, and — when this Python
has torch, transformers and transformer-lens — transformers' eager forward with
output_attentions=True plus TransformerLens's head-detector score (its three detection patterns:
previous token, duplicate token, induction) on the same threads. A benchmark, not a test: it
prints the median and min–max of --reps runs and the ratios, measured in this one process.

    PYTHON=.venv-test/bin/python   # with the headmap wheel (release: scripts/build/wheel), pyarrow, ray
    $PYTHON scripts/bench/corpus.py --model models/all-MiniLM-L6-v2 --sentences 2000 --reps 3

Sentences are ~32 tokens of MiniLM's vocabulary, drawn with a fixed seed.
"""

import argparse
import os
import random
import resource
import statistics
import sys
import time

WORDS = ("the animal did not cross street because it was too tired wide she said that he went home "
         "and then again cat sat on mat river bridge small dog ran across park window opened warm "
         "children played garden until dark letter read twice rain fell all day").split()


def corpus(n, words=26, seed=1):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(words)) + "." for _ in range(n)]


def timed(fn, reps):
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times


def report(name, n, times, base=None):
    rates = sorted(n / t for t in times)
    med = statistics.median(rates)
    ratio = f"  {med / base:5.2f}× the first line" if base else ""
    print(f"{name:52s} {med:8.1f} sentences/s (min {rates[0]:.1f}, max {rates[-1]:.1f}){ratio}")
    return med


def headmap_runs(args, texts):
    import headmap
    import headmap.corpus

    out = {}
    for threads in (1, 2):
        model = headmap.load(args.model, threads=threads)
        tokens = model.scores(texts[:1])["tokens"][0]
        if threads == 1:
            print(f"{len(texts)} sentences of {tokens} tokens (the first), MiniLM's every head and score\n")
        times = timed(lambda: headmap.corpus.scores(model, texts, batch_size=256, progress=False), args.reps)
        out[threads] = times
    return out


def ray_runs(args, texts):
    import ray

    import headmap.ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    ds = ray.data.from_items([{"id": i, "text": t} for i, t in enumerate(texts)], override_num_blocks=8).materialize()
    out = {}
    for actors in (1, 2):
        out[actors] = timed(lambda: headmap.ray.scores(ds, args.model, id_column="id", concurrency=actors, batch_size=128, threads=1), args.reps)
    ray.shutdown()
    return out


def torch_runs(args, texts):
    try:
        import torch
        from transformer_lens import head_detector as hd
        from transformers import AutoModel, AutoTokenizer
    except ImportError as e:
        print(f"(transformers + TransformerLens not measured: {e})")
        return None
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModel.from_pretrained(args.model, attn_implementation="eager").eval()
    patterns = (hd.get_previous_token_head_detection_pattern, hd.get_duplicate_token_head_detection_pattern,
                hd.get_induction_head_detection_pattern)

    def run():
        with torch.no_grad():
            for text in texts:
                ids = tok(text, return_tensors="pt")
                attentions = model(**ids, output_attentions=True).attentions
                tokens = ids["input_ids"][0].cpu()
                detections = [p(tokens).to(torch.float32) for p in patterns]
                for layer in attentions:
                    for head in layer[0]:
                        for d in detections:
                            hd.compute_head_attention_similarity_score(head, d, exclude_bos=False, exclude_current_token=False, error_measure="mul")

    out = {}
    for threads in (1, 2):
        torch.set_num_threads(threads)
        out[threads] = timed(run, args.reps)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="models/all-MiniLM-L6-v2")
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--skip-ray", action="store_true")
    parser.add_argument("--skip-torch", action="store_true")
    args = parser.parse_args()
    texts = corpus(args.sentences)
    n = len(texts)
    native = headmap_runs(args, texts)
    base = report("headmap.corpus.scores, 1 thread", n, native[1])
    report("headmap.corpus.scores, 2 threads", n, native[2], base)
    if not args.skip_ray:
        on_ray = ray_runs(args, texts)
        one = report("headmap.ray.scores, 1 actor (1 thread)", n, on_ray[1], base)
        two = report("headmap.ray.scores, 2 actors (1 thread each)", n, on_ray[2], base)
        print(f"{'':52s} 2 actors / 1 actor: {two / one:.2f}×")
    reference = None if args.skip_torch else torch_runs(args, texts)
    if reference:
        for threads in (1, 2):
            theirs = report(f"transformers eager + TransformerLens scores, {threads} thread(s)", n, reference[threads], base)
            ours = statistics.median(n / t for t in native[threads])
            print(f"{'':52s} headmap on {threads} thread(s) / this: {ours / theirs:.2f}×")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak memory of this process: {peak:.0f} MB (Python {sys.version.split()[0]}, {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
