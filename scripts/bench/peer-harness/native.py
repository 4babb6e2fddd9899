"""The native half of `scripts/bench/peers`: headmap (`benches/peers.rs`, driven over a pipe),
onnxruntime on the CPU with 1 and 2 threads and PyTorch eager with 1 and 2 threads, all on the
same ids, interleaved round by round, every attention weight returned. Checks the peers'
weights against headmap's first; writes the times as JSON. Figures, never assertions.

    python scripts/bench/peer-harness/native.py --headmap BIN --ids ids.json --onnx model.onnx \
        --model models/all-MiniLM-L6-v2 --runs 20 --out native.json

onnxruntime and PyTorch are optional: a peer whose package is missing is left out and said so.
"""

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# numpy comes with onnxruntime and PyTorch; without them headmap runs alone and needs none

WEIGHTS_ONLY = "headmap, weights only (no last hidden state)"
TWO_THREADS = "headmap, 2 threads"

class Pipe:
    """An engine in a process of its own, answering `run N` (its own milliseconds) and
    `weights N PATH`: headmap's bench in `serve` mode, or this script in `--serve` mode for a
    peer. Separate processes keep one runtime's spinning threads from stealing another's
    time, and each keeps its thread count fixed, as the browser's workers do."""

    def __init__(self, name, command, env=None):
        self.name = name
        env = {**os.environ, **(env or {})}
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        if not answer:
            raise SystemExit(f"{self.name} stopped answering ({line!r})")
        return answer

    def run(self, n):
        return float(self.ask(f"run {n}"))

    def weights(self, n, shape):
        import numpy as np

        with tempfile.NamedTemporaryFile(suffix=".f32") as f:
            self.ask(f"weights {n} {f.name}")
            return np.fromfile(f.name, dtype="<f4").reshape(shape)

    def close(self):
        self.proc.stdin.close()  # an engine stops at the end of its input
        self.proc.wait()


def feeds(ids):
    import numpy as np

    ids = np.asarray(ids, dtype=np.int64)[None, :]  # (1, T)
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}


class OnnxRuntime:
    def __init__(self, onnx_path, threads):
        import onnxruntime as ort

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
        self.outputs = [o.name for o in self.session.get_outputs()]
        self.name = f"onnxruntime {ort.__version__}, {threads} thread{'s' if threads > 1 else ''}"
        self.feeds = {}

    def run(self, ids):
        f = self.feeds.setdefault(len(ids), feeds(ids))
        start = time.perf_counter()
        self.session.run(self.outputs, f)
        return (time.perf_counter() - start) * 1e3

    def weights(self, ids):
        import numpy as np

        out = dict(zip(self.outputs, self.session.run(self.outputs, feeds(ids))))
        return np.concatenate([out[f"attentions.{i}"] for i in range(sum(o.startswith("attentions.") for o in out))])


class Torch:
    def __init__(self, model_dir, threads):
        import torch
        from transformers import BertModel

        torch.set_num_threads(threads)
        self.torch = torch
        self.model = BertModel.from_pretrained(model_dir, attn_implementation="eager", add_pooling_layer=False).eval()
        self.name = f"PyTorch {torch.__version__.split('+')[0]} eager, {threads} thread{'s' if threads > 1 else ''}"
        self.feeds = {}

    def forward(self, ids):
        f = {k: self.torch.from_numpy(v) for k, v in feeds(ids).items()}
        return self.model(**f, output_attentions=True)

    def run(self, ids):
        f = self.feeds.setdefault(len(ids), {k: self.torch.from_numpy(v) for k, v in feeds(ids).items()})
        with self.torch.inference_mode():
            start = time.perf_counter()
            self.model(**f, output_attentions=True)
            return (time.perf_counter() - start) * 1e3

    def weights(self, ids):
        import numpy as np

        with self.torch.inference_mode():
            out = self.forward(ids)
        return np.concatenate([a.numpy() for a in out.attentions])


GEMM_ONLY = "GEMM only: the forward's products (ndarray dot)"


def stats(times):
    t = sorted(times)
    # `times` in the order of the rounds, for ratios round by round (table.mjs)
    return {"median": t[len(t) // 2], "min": t[0], "max": t[-1], "runs": len(t), "times": list(times)}


def serve(engine, all_ids):
    """Answers the driver's commands on stdin (see `Pipe`)."""
    for line in sys.stdin:
        words = line.split()
        if words[0] == "run":
            answer = engine.run(all_ids[words[1]])
        else:
            engine.weights(all_ids[words[1]]).astype("<f4").tofile(words[2])
            answer = "ok"
        print(answer, flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--headmap", required=True)
    p.add_argument("--ids", type=Path, required=True)
    p.add_argument("--onnx", type=Path, required=True)
    p.add_argument("--model", type=Path, required=True)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--settle", type=float, default=0, help="ms to wait before each engine's run (default none)")
    p.add_argument("--gemm", help="scripts/bench/peer-harness/gemm's binary: times the forward's products alone, in the rounds")
    p.add_argument("--gemm-avx512", help="the same built with matrixmultiply's AVX-512 kernel (which ndarray turns off)")
    p.add_argument("--out", type=Path)
    p.add_argument("--serve", choices=["onnxruntime", "torch"], help="(internal) be one engine's process")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    all_ids = json.loads(args.ids.read_text())
    if args.serve:
        engine = OnnxRuntime(args.onnx, args.threads) if args.serve == "onnxruntime" else Torch(args.model, args.threads)
        print(engine.name, flush=True)
        return serve(engine, all_ids)

    config = json.loads((args.model / "config.json").read_text())
    layers, heads = config["num_hidden_layers"], config["num_attention_heads"]
    # headmap on 1 thread (the reference) and on 2 (HEADMAP_THREADS), each a process of its own
    serve_ids = [args.headmap, "serve", str(args.ids)]
    engines = [Pipe("headmap", serve_ids, {"HEADMAP_THREADS": "1"}), Pipe(TWO_THREADS, serve_ids, {"HEADMAP_THREADS": "2"})]
    # the same forward without the last layer's V, W_O and feed-forward (Model::run_weights):
    # every weight, no last hidden state; the peers' graphs still compute theirs
    engines.append(Pipe(WEIGHTS_ONLY, serve_ids + ["--weights-only"], {"HEADMAP_THREADS": "1"}))
    missing = []
    for kind, module in (("onnxruntime", "onnxruntime"), ("torch", "transformers")):
        try:
            __import__(module)
            __import__("torch") if kind == "torch" else None
        except ImportError:
            missing.append(kind)
            print(f"[native] left out: {kind} (not installed for {sys.executable})", file=sys.stderr)
            continue
        for threads in (1, 2):
            command = [sys.executable, __file__, "--serve", kind, "--threads", str(threads), "--headmap", args.headmap,
                       "--ids", str(args.ids), "--onnx", str(args.onnx), "--model", str(args.model)]
            pipe = Pipe(kind, command)
            pipe.name = pipe.proc.stdout.readline().strip()  # the engine says what it is once loaded
            engines.append(pipe)

    # what returns weights to compare (2 threads and weights only: bit-identical to headmap's)
    peers = [engines[1]] + engines[3:]
    if args.gemm:
        engines.append(Pipe(GEMM_ONLY, [args.gemm, "serve", str(layers)]))
    if args.gemm_avx512:
        engines.append(Pipe(GEMM_ONLY.replace(")", ", AVX-512 kernel)"), [args.gemm_avx512, "serve", str(layers)]))

    result = {"engines": [e.name for e in engines], "missing": missing, "lengths": {}}
    for n, ids in all_ids.items():
        shape = (layers, heads, len(ids), len(ids))
        # 1. agreement with headmap's weights, before anything is timed
        delta = {}
        if peers:
            reference = engines[0].weights(n, shape)
            delta = {e.name: float(abs(e.weights(n, shape) - reference).max()) for e in peers}
        # 2. warm-up, then interleaved rounds: every engine once per round
        for _ in range(args.warmup):
            for e in engines:
                e.run(n)
        times = {e.name: [] for e in engines}
        for r in range(args.runs):
            # a new order each round, the same in every run: an engine whose threads spin on
            # after its run (OpenMP's, onnxruntime's) slows whichever runs next, and in a fixed
            # or rotated order one engine followed the same one in nearly every round
            order = list(engines)
            random.Random(r).shuffle(order)
            for e in order:
                # --settle: the last engine's threads may spin on after its run (onnxruntime's
                # and OpenMP's do by default) and take this one's cores; a pause lets them stop,
                # and also lets idle threads fall asleep, which a run then pays to wake
                if args.settle:
                    time.sleep(args.settle / 1e3)
                times[e.name].append(e.run(n))
        result["lengths"][n] = {"delta": delta, "times": {k: stats(v) for k, v in times.items()}}
        medians = ", ".join(f"{k} {v['median']:.1f}" for k, v in result["lengths"][n]["times"].items())
        print(f"[native] {n:>4} tokens, median ms: {medians}", file=sys.stderr)
    for e in engines:
        e.close()
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
