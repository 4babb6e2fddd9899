#!/usr/bin/env python3
"""Writes tests/fixtures/hf/: tiny random BERT, GPT-2, BART and Marian models as Hugging Face
saves them, and what transformers computes with them, for headmap's parity tests.

Not run in CI (it needs PyTorch and transformers); run by hand and commit the output:

    pip install torch transformers tokenizers sentencepiece safetensors
    python3 scripts/dev/make_hf_fixtures.py            # the tiny models
    python3 scripts/dev/make_hf_fixtures.py --minilm   # also MiniLM (needs models/all-MiniLM-L6-v2)
    python3 scripts/dev/make_hf_fixtures.py --greedy-only  # only (re)write the greedy references

Per model folder: config.json, model.safetensors and the tokenizer files, plus
reference.json (inputs: ids, masks, tokens) and reference.safetensors (per layer attentions
[B, H, Tq, Tk] for each kind the model has, and the last hidden states), computed with
attn_implementation="eager" and output_attentions=True in float32. Weights are stored in
f32 (BERT, Marian), f16 (GPT-2) and bf16 (BART), so every dtype path is tested; the
reference runs on the same rounded weights.
"""

import json
import pathlib
import sys
import tempfile

import torch
from safetensors.torch import save_file
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import (
    BartConfig,
    BartModel,
    BertConfig,
    BertModel,
    GPT2Config,
    GPT2Model,
    MarianConfig,
    MarianMTModel,
    PreTrainedTokenizerFast,
)

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "hf"

ANIMAL_EN = "The animal didn't cross the street because it was too tired."
ANIMAL_KO = "동물이 길을 건너지 않았다. 그것은 너무 피곤했다."
GIVE_KO = "민수가 영희에게 책을 주었다."
GIVE_EN = "Minsu gave Younghee a book."
CORPUS = [ANIMAL_EN, ANIMAL_KO, GIVE_KO, GIVE_EN, "Attention is all you need.", "어텐션은 Q와 K로 비율을 정하고 V를 섞는다."]


def seed(n):
    torch.manual_seed(n)


def save_model(model, folder, dtype):
    """Rounds the weights to `dtype`, saves them so, and returns the model back in float32."""
    model = model.to(dtype)
    model.save_pretrained(folder, safe_serialization=True)
    return model.to(torch.float32).eval()


def write_reference(folder, cases, tensors):
    (folder / "reference.json").write_text(json.dumps({"transformers": __import__("transformers").__version__, "cases": cases}, ensure_ascii=False, indent=1) + "\n")
    save_file({k: v.contiguous().to(torch.float32) for k, v in tensors.items()}, folder / "reference.safetensors")


def record(tensors, prefix, out):
    for kind in ("attentions", "encoder_attentions", "decoder_attentions", "cross_attentions"):
        layers = getattr(out, kind, None)
        if layers:
            for i, a in enumerate(layers):
                tensors[f"{prefix}.{kind}.{i}"] = a
    for kind in ("last_hidden_state", "encoder_last_hidden_state"):
        h = getattr(out, kind, None)
        if h is not None:
            tensors[f"{prefix}.{kind}"] = h


# --- tokenizers, made with the tokenizers library from the corpus ---

def wordpiece_tokenizer():
    words = sorted({w for s in CORPUS for w in s.lower().replace(".", " . ").replace("'", " ' ").split()})
    chars = sorted({c for s in CORPUS for c in s.lower() if not c.isspace()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars + [f"##{c}" for c in chars] + [w for w in words if len(w) > 1][:60]
    vocab = list(dict.fromkeys(vocab))
    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tok.decoder = decoders.WordPiece()
    return tok, {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]"}


def byte_bpe_tokenizer(specials, bart):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=320, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    if bart:
        tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")), trim_offsets=True)
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


def fast(tok, **specials):
    return PreTrainedTokenizerFast(tokenizer_object=tok, **specials)


# --- models ---

def bert(folder):
    seed(1)
    tok, specials = wordpiece_tokenizer()
    tok.save(str(folder / "tokenizer.json"))
    cfg = BertConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48, max_position_embeddings=64, type_vocab_size=2, pad_token_id=0, attn_implementation="eager")
    model = save_model(BertModel(cfg, add_pooling_layer=False), folder, torch.float32)
    t = fast(tok, **specials)
    return run_encoder_cases(model, t, [[ANIMAL_KO], [ANIMAL_EN], [ANIMAL_KO, GIVE_EN]])


def run_encoder_cases(model, t, batches, causal=False):
    cases, tensors = [], {}
    for n, texts in enumerate(batches):
        enc = t(texts, padding=True, return_tensors="pt")
        with torch.no_grad():
            out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], output_attentions=True)
        record(tensors, f"case{n}", out)
        cases.append({
            "texts": texts,
            "input_ids": enc["input_ids"].tolist(),
            "attention_mask": enc["attention_mask"].tolist(),
            "tokens": [t.convert_ids_to_tokens(ids) for ids in enc["input_ids"].tolist()],
        })
    return cases, tensors


def gpt2(folder):
    seed(2)
    tok = byte_bpe_tokenizer(["<|endoftext|>"], bart=False)
    tok.save(str(folder / "tokenizer.json"))
    eos = tok.token_to_id("<|endoftext|>")
    cfg = GPT2Config(vocab_size=tok.get_vocab_size(), n_embd=32, n_layer=2, n_head=4, n_positions=64, bos_token_id=eos, eos_token_id=eos, attn_implementation="eager")
    model = save_model(GPT2Model(cfg), folder, torch.float16)
    t = fast(tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>", bos_token="<|endoftext|>")
    return run_encoder_cases(model, t, [[ANIMAL_KO], [ANIMAL_EN], [ANIMAL_EN, GIVE_EN]])


def run_seq2seq_cases(model, src_tok, tgt_tok, start_id, pad_id, pairs):
    cases, tensors = [], {}
    for n, (sources, targets) in enumerate(pairs):
        enc = src_tok(sources, padding=True, return_tensors="pt")
        labels = tgt_tok(targets, padding=True, return_tensors="pt")
        # teacher forcing as transformers does it for labels: shift right, start token first
        dec = labels["input_ids"].new_full(labels["input_ids"].shape, pad_id)
        dec[:, 1:] = labels["input_ids"][:, :-1]
        dec[:, 0] = start_id
        dec_mask = labels["attention_mask"].clone()
        dec_mask[:, 1:] = labels["attention_mask"][:, :-1]
        dec_mask[:, 0] = 1
        with torch.no_grad():
            out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], decoder_input_ids=dec, decoder_attention_mask=dec_mask, output_attentions=True)
        record(tensors, f"case{n}", out)
        cases.append({
            "sources": sources,
            "targets": targets,
            "input_ids": enc["input_ids"].tolist(),
            "attention_mask": enc["attention_mask"].tolist(),
            "labels": labels["input_ids"].tolist(),
            "decoder_input_ids": dec.tolist(),
            "decoder_attention_mask": dec_mask.tolist(),
        })
    return cases, tensors


PAIRS = [([GIVE_KO], [GIVE_EN]), ([ANIMAL_KO, GIVE_KO], [ANIMAL_EN, GIVE_EN])]


def bart(folder):
    seed(3)
    tok = byte_bpe_tokenizer(["<s>", "<pad>", "</s>", "<unk>", "<mask>"], bart=True)
    tok.save(str(folder / "tokenizer.json"))
    cfg = BartConfig(vocab_size=tok.get_vocab_size(), d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, max_position_embeddings=64, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2, attn_implementation="eager")
    model = save_model(BartModel(cfg), folder, torch.bfloat16)
    t = fast(tok, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>", mask_token="<mask>")
    return run_seq2seq_cases(model, t, t, cfg.decoder_start_token_id, cfg.pad_token_id, PAIRS)


def marian(folder):
    import sentencepiece as spm
    from transformers import MarianTokenizer

    seed(4)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = pathlib.Path(tmp) / "corpus.txt"
        corpus.write_text("\n".join(CORPUS * 3) + "\n")
        spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(pathlib.Path(tmp) / "m"), vocab_size=90, model_type="unigram", character_coverage=1.0, bos_id=-1, eos_id=2, unk_id=1, pad_id=-1, hard_vocab_limit=False)
        spm_bytes = (pathlib.Path(tmp) / "m.model").read_bytes()
    (folder / "source.spm").write_bytes(spm_bytes)
    (folder / "target.spm").write_bytes(spm_bytes)
    sp = spm.SentencePieceProcessor(model_proto=spm_bytes)
    # Marian's vocab.json orders pieces its own way: </s> 0, <unk> 1, then the pieces, <pad> last.
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
    ordered = ["</s>", "<unk>"] + sorted(p for p in pieces if p not in ("</s>", "<unk>", "<s>")) + ["<pad>"]
    vocab = {p: i for i, p in enumerate(ordered)}
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=1) + "\n")
    t = MarianTokenizer(str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json"))
    pad = vocab["<pad>"]
    cfg = MarianConfig(vocab_size=len(vocab), d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=48, decoder_ffn_dim=48, max_position_embeddings=64, pad_token_id=pad, eos_token_id=0, decoder_start_token_id=pad, scale_embedding=True, activation_function="swish", attn_implementation="eager")
    model = save_model(MarianMTModel(cfg), folder, torch.float32).model
    t.save_pretrained(folder)  # tokenizer_config.json etc.: what a Marian repository ships
    return run_seq2seq_cases(model, t, t, cfg.decoder_start_token_id, pad, PAIRS)


def minilm(folder):
    src = ROOT / "models" / "all-MiniLM-L6-v2"
    model = BertModel.from_pretrained(src, attn_implementation="eager", add_pooling_layer=False).eval()
    t = PreTrainedTokenizerFast(tokenizer_file=str(src / "tokenizer.json"), pad_token="[PAD]")
    return run_encoder_cases(model, t, [[ANIMAL_KO], [ANIMAL_EN, GIVE_KO]])


def add_greedy():
    """Appends greedy generate() outputs of the saved tiny BART and Marian to their references."""
    from transformers import BartForConditionalGeneration

    for name, cls in (("bart", BartForConditionalGeneration), ("marian", MarianMTModel)):
        folder = OUT / name
        model = cls.from_pretrained(folder, attn_implementation="eager").to(torch.float32).eval()
        reference = json.loads((folder / "reference.json").read_text())
        greedy = []
        for ids in reference["cases"][0]["input_ids"]:
            with torch.no_grad():
                out = model.generate(torch.tensor([ids]), num_beams=1, do_sample=False, max_new_tokens=10)
            greedy.append({"input_ids": ids, "max_new_tokens": 10, "output_ids": out[0].tolist()})
        reference["greedy"] = greedy
        (folder / "reference.json").write_text(json.dumps(reference, ensure_ascii=False, indent=1) + "\n")
        print(f"{name}: greedy {greedy[0]['output_ids']}")


def main():
    if "--greedy-only" in sys.argv:
        return add_greedy()
    makers = {"bert": bert, "gpt2": gpt2, "bart": bart, "marian": marian}
    if "--minilm" in sys.argv:
        makers["minilm"] = minilm
    for name, make in makers.items():
        folder = OUT / name
        folder.mkdir(parents=True, exist_ok=True)
        cases, tensors = make(folder)
        write_reference(folder, cases, tensors)
        size = sum(f.stat().st_size for f in folder.iterdir())
        print(f"{name}: {len(cases)} cases, {len(tensors)} tensors, {size} bytes in {folder}")
    add_greedy()


if __name__ == "__main__":
    main()
