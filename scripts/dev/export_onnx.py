"""Exports all-MiniLM-L6-v2 to ONNX with every layer's attention probabilities as outputs, for
`scripts/bench/peers` (onnxruntime-web, transformers.js and onnxruntime natively run it).

Needs PyTorch, transformers, onnx and onnxruntime; not run in CI. Reads the same safetensors
headmap reads; checks the exported attentions against transformers on the same ids before
anything is timed, and refuses to write a file that disagrees.

    /work/venv/bin/python scripts/dev/export_onnx.py [--model models/all-MiniLM-L6-v2] [--out DIR]

DIR (default bench-pkg/minilm-onnx/, git-ignored) gets transformers.js's layout:
config.json, tokenizer.json, tokenizer_config.json and onnx/model.onnx. Outputs:
`last_hidden_state` (1, T, D) and `attentions.0` … `attentions.5`, each (1, H, T, T).
"""

import argparse
import json
import shutil
from pathlib import Path

import numpy as np
import onnxruntime as ort
import torch
from transformers import BertModel

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 1e-5  # exported vs transformers, float32 on the same CPU


class WithAttentions(torch.nn.Module):
    """BertModel whose outputs are a flat tuple: the last hidden state, then each layer's
    attention probabilities (after softmax, as `output_attentions=True` gives them)."""

    def __init__(self, bert):
        super().__init__()
        self.bert = bert

    def forward(self, input_ids, attention_mask, token_type_ids):
        out = self.bert(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            output_attentions=True,
            return_dict=True,
        )
        return (out.last_hidden_state, *out.attentions)


def feeds(ids):
    ids = np.asarray(ids, dtype=np.int64)[None, :]  # (1, T)
    return {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=ROOT / "models/all-MiniLM-L6-v2")
    parser.add_argument("--out", type=Path, default=ROOT / "bench-pkg/minilm-onnx")
    args = parser.parse_args()

    bert = BertModel.from_pretrained(args.model, attn_implementation="eager", add_pooling_layer=False).eval()
    layers = bert.config.num_hidden_layers
    names = ["last_hidden_state", *(f"attentions.{i}" for i in range(layers))]
    wrapped = WithAttentions(bert).eval()

    # 1. export with a dynamic sequence length (batch fixed at 1: the benchmark runs one row)
    onnx_dir = args.out / "onnx"
    onnx_dir.mkdir(parents=True, exist_ok=True)
    path = onnx_dir / "model.onnx"
    example = {k: torch.from_numpy(v) for k, v in feeds([101] + [1996] * 14 + [102]).items()}
    seq = {1: "sequence"}
    torch.onnx.export(
        wrapped,
        (example["input_ids"], example["attention_mask"], example["token_type_ids"]),
        str(path),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=names,
        dynamic_axes={
            "input_ids": seq,
            "attention_mask": seq,
            "token_type_ids": seq,
            **{n: ({1: "sequence"} if n == "last_hidden_state" else {2: "sequence", 3: "sequence"}) for n in names},
        },
        opset_version=17,
        dynamo=False,
        external_data=False,
    )

    # 2. the exported attentions against transformers, on ids of the lengths the benchmark uses
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    worst = 0.0
    for n in (16, 128, 512):
        ids = [101, *rng.integers(1000, 29000, n - 2).tolist(), 102]
        got = session.run(names, feeds(ids))
        with torch.no_grad():
            want = wrapped(**{k: torch.from_numpy(v) for k, v in feeds(ids).items()})
        deltas = {name: float(np.max(np.abs(g - w.numpy()))) for name, g, w in zip(names, got, want)}
        attention = max(deltas[name] for name in names[1:])
        for name, g in zip(names[1:], got[1:]):
            if g.shape != (1, bert.config.num_attention_heads, n, n):
                raise SystemExit(f"{name} has shape {g.shape} at {n} tokens")
        if attention > TOLERANCE:
            raise SystemExit(f"the attentions at {n} tokens differ from transformers by {attention:.2e} > {TOLERANCE}")
        print(f"[export] {n:>4} tokens: max |Δ| attentions {attention:.2e}, last_hidden_state {deltas[names[0]]:.2e}")
        worst = max(worst, attention)
    print(f"[export] exported attentions agree with transformers (eager, float32) to {worst:.2e}")

    # 3. transformers.js reads config and tokenizer beside onnx/
    for f in ("config.json", "tokenizer.json"):
        shutil.copy(args.model / f, args.out / f)
    tokenizer_config = {"tokenizer_class": "BertTokenizer", "do_lower_case": True, "model_max_length": 512}
    (args.out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=2) + "\n")
    print(f"[export] wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} ({path.stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
