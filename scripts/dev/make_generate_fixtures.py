#!/usr/bin/env python3
"""Writes what transformers' greedy `generate` writes with the tiny models of tests/fixtures/hf/
and both trained models of www/models/, for headmap's generation parity test
(tests/generate.rs, `greedy_ids_equal_transformers_generate`).

Not run in CI (it needs PyTorch and transformers); run by hand and commit the output:

    pip install torch transformers safetensors
    python3 scripts/dev/make_generate_fixtures.py

Writes tests/fixtures/generate/greedy.json: per model, its prompt ids (the first case of its
reference.json, or the trained model's own tokenizer), max_new_tokens, and the ids
generate(do_sample=False, num_beams=1) returns — for a decoder-only model the prompt and what
it wrote, for an encoder-decoder the decoder start token and what it wrote. For the induction
model also with its previous-token head (layer 0, head 3) zeroed by a forward pre-hook on the
attention's output projection, as headmap's --ablate 0.3 turns it off.
"""

import json
import pathlib

import torch
from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, PreTrainedTokenizerFast

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "hf"
MODELS = ROOT / "www" / "models"
OUT = ROOT / "tests" / "fixtures" / "generate" / "greedy.json"

CAUSAL = ["gpt2", "gpt2-inverse-layer", "gpt_neo", "gpt_neox", "gpt_neox-odd-rotary", "gpt_neox-sequential",
          "llama", "llama3", "mistral", "qwen2"]
SEQ2SEQ = ["bart", "marian", "t5", "t5-v1_1"]
MAX_NEW = 12


def fixture_ids(name):
    case = json.loads((FIXTURES / name / "reference.json").read_text())["cases"][0]
    return case["input_ids"][0]


def greedy(model, ids, max_new):
    # transformers 5.25's cache fails on the T5 fixtures (a decoder of another depth than the
    # encoder): T5 decodes without it, which changes no id
    cache = model.config.model_type != "t5"
    with torch.no_grad():
        out = model.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                             do_sample=False, num_beams=1, max_new_tokens=max_new, use_cache=cache)
    return out[0].tolist()


def zero_head(projection, head, d_k):
    def hook(_module, args):
        (x,) = args
        x = x.clone()
        x[..., head * d_k:(head + 1) * d_k] = 0
        return (x,)
    return projection.register_forward_pre_hook(hook)


def main():
    torch.manual_seed(0)
    cases = {}
    for name in CAUSAL + SEQ2SEQ:
        cls = AutoModelForSeq2SeqLM if name in SEQ2SEQ else AutoModelForCausalLM
        model = cls.from_pretrained(FIXTURES / name, attn_implementation="eager").eval()
        ids = fixture_ids(name)
        cases[name] = {"prompt_ids": ids, "max_new_tokens": MAX_NEW, "output_ids": greedy(model, ids, MAX_NEW)}

    for folder, text, cls in [
        ("headmap-tiny-ko-en", "동물이 길을 건너지 않았다. 그것은 너무 피곤했다.", AutoModelForSeq2SeqLM),
        ("headmap-tiny-induction", "고양이 공원 노래 꽃 강 가방 고양이 공원", AutoModelForCausalLM),
    ]:
        tokenizer = PreTrainedTokenizerFast(tokenizer_file=str(MODELS / folder / "tokenizer.json"))
        model = cls.from_pretrained(MODELS / folder, attn_implementation="eager").eval()
        ids = tokenizer(text)["input_ids"]
        case = {"text": text, "prompt_ids": ids, "max_new_tokens": 40, "output_ids": greedy(model, ids, 40)}
        if folder == "headmap-tiny-induction":
            attn = model.transformer.h[0].attn
            handle = zero_head(attn.c_proj, 3, model.config.n_embd // model.config.n_head)
            case["ablate"] = "0.3"
            case["ablated_output_ids"] = greedy(model, ids, 40)
            handle.remove()
        cases[folder] = case

    OUT.parent.mkdir(parents=True, exist_ok=True)
    import transformers
    OUT.write_text(json.dumps({"transformers": transformers.__version__, "torch": torch.__version__, "cases": cases},
                              ensure_ascii=False, indent=1) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
