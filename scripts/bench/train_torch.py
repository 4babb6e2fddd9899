"""The baseline of scripts/bench/train.mjs: the page's default training step in PyTorch eager on
one thread — GPT-2's attention-only blocks (transformers' GPT2LMHeadModel, its MLPs replaced by
nothing, as headmap's trainer has none), 2 layers, d_model 32, 4 heads, vocabulary 32, batch 32
of 33 tokens, an untied output head, Adam at 1e-3 — the ms of 100 steps per repetition, after a
warm-up, as JSON on the last line. The batches are drawn before the clock starts: only the
forward, the backward and Adam's step are timed.

    python3 scripts/bench/train_torch.py [repetitions]
"""

import json
import sys
import time

import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.set_num_threads(1)
torch.manual_seed(0)
REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
STEPS, V, T, D, B = 100, 32, 33, 32, 32


class NoMLP(torch.nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)


config = GPT2Config(vocab_size=V, n_positions=T, n_embd=D, n_layer=2, n_head=4, n_inner=4 * D,
                    resid_pdrop=0, embd_pdrop=0, attn_pdrop=0, tie_word_embeddings=False,
                    bos_token_id=0, eos_token_id=0, attn_implementation="eager")
model = GPT2LMHeadModel(config)
for block in model.transformer.h:
    block.mlp = NoMLP()
    block.ln_2.requires_grad_(False)
params = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.Adam(params, lr=1e-3)
batches = torch.randint(0, V, (STEPS, B, T))

ms = []
for rep in range(REPS + 1):
    started = time.perf_counter()
    for ids in batches:
        logits = model(ids).logits[:, :-1]
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), ids[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if rep > 0:  # the first is a warm-up
        ms.append((time.perf_counter() - started) * 1000)
print(json.dumps({"torch": torch.__version__, "parameters": sum(p.numel() for p in params), "steps": STEPS, "ms": ms}))
