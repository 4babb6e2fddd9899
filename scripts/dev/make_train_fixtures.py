#!/usr/bin/env python3
"""Writes what PyTorch computes for one training step of headmap's trainer, for the trainer's
parity test (tests/train_parity.rs): the loss, every weight's gradient by autograd, and the
weights after one `torch.optim.Adam` step.

Not run in CI (it needs PyTorch and transformers); run by hand from the repository root, with
the headmap binary built (`cargo build --release --features cli`), and commit the output:

    python3 scripts/dev/make_train_fixtures.py

It asks `headmap train` for the initial weights of a small model (its step-0 checkpoint, seed
3, tied and untied heads), loads each as transformers' GPT2LMHeadModel, runs a fixed batch of
ids through it, and writes tests/fixtures/train/step-{tied,untied}.json.
"""

import json
import pathlib
import subprocess
import tempfile

import torch
from transformers import GPT2LMHeadModel

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "train"
SIZE = dict(layers=2, d_model=16, heads=2, vocab=11, length=9, seed=3)
LR = 3e-3
# three sequences of the model's 9 positions, fixed here (the trainer's own batches are drawn
# in Rust; the gradient of a batch does not depend on where its ids came from)
IDS = [[1, 4, 2, 9, 4, 2, 7, 0, 4], [10, 3, 3, 5, 10, 3, 6, 1, 2], [0, 0, 8, 8, 2, 9, 2, 9, 5]]


def step_zero(tied, folder):
    """headmap's initial weights for SIZE, as the step-0 checkpoint it writes."""
    args = [str(ROOT / "target" / "release" / "headmap"), "train", "--steps", "1", "--checkpoints", "2",
            "--score-every", "1", "--batch-size", "1", "--out", str(folder)]
    for key, value in SIZE.items():
        args += [f"--{key.replace('_', '-')}", str(value)]
    if tied:
        args.append("--tied")
    subprocess.run(args, check=True, capture_output=True)
    return folder / "checkpoints" / "step-0"


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    for tied in (False, True):
        with tempfile.TemporaryDirectory() as tmp:
            model = GPT2LMHeadModel.from_pretrained(step_zero(tied, pathlib.Path(tmp)), attn_implementation="eager")
        model.train()
        ids = torch.tensor(IDS)
        logits = model(input_ids=ids).logits[:, :-1]
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1))
        loss.backward()
        # the trainer's tensors: every one but ln_2 and the MLP, which it leaves at 1, 0 and 0
        named = {n.removeprefix("transformer."): p for n, p in model.named_parameters()
                 if ".mlp." not in n and ".ln_2." not in n}
        grads = {n: p.grad.flatten().tolist() for n, p in named.items()}
        adam = torch.optim.Adam(list(named.values()), lr=LR)
        adam.step()
        after = {n: p.detach().flatten().tolist() for n, p in named.items()}
        doc = {"size": SIZE, "tied": tied, "learning_rate": LR, "ids": IDS, "loss": loss.item(),
               "grad": grads, "after_adam": after}
        name = OUT / f"step-{'tied' if tied else 'untied'}.json"
        name.write_text(json.dumps(doc) + "\n")
        print(f"{name.relative_to(ROOT)}: loss {loss.item():.6f}, {sum(map(len, grads.values()))} gradients")


if __name__ == "__main__":
    main()
