#!/usr/bin/env python3
"""Writes tiny random models of the families people open most (RoBERTa, XLM-R, DistilBERT,
ELECTRA, GPT-NeoX/Pythia (also with an odd rotary dimension), GPT-Neo, Llama, Qwen2, Mistral,
T5, GPT-2 with inverse-layer scaling) to tests/fixtures/hf/<name>/, with what transformers
computes with them, for headmap's parity tests. A companion of make_hf_fixtures.py: same
files, same reference format.

Not run in CI (it needs PyTorch, transformers, tokenizers, sentencepiece and protobuf); run by
hand and commit the output:

    pip install torch transformers tokenizers sentencepiece safetensors protobuf
    python3 scripts/dev/make_family_fixtures.py                 # every family
    python3 scripts/dev/make_family_fixtures.py llama t5        # only these folders

Per folder: config.json, model.safetensors (or model.safetensors.index.json + shards),
tokenizer.json, reference.json (inputs: ids, masks, tokens; plus how the batch was padded) and
reference.safetensors (per layer attentions [B, H, Tq, Tk] for every place the model has, and
the last hidden states), computed with attn_implementation="eager", output_attentions=True,
in float32 on the weights as saved (f32, f16 or bf16), by a model transformers loads back
from the folder itself, so the files on disk are what the reference belongs to.

Every model is a *task* checkpoint (ForMaskedLM, ForPreTraining, ForCausalLM,
ForConditionalGeneration) unless noted, so weight keys carry the prefixes real checkpoints have
(`roberta.`, `distilbert.`, `electra.`, `gpt_neox.`, `transformer.`, `model.`); the references
come from the base model (last_hidden_state before any head). Weights are drawn larger than
transformers' default (initializer_range 0.02 makes every attention row nearly uniform, so a
wrong position scheme would still pass at 1e-4); after each model the script prints how far
the attentions move when each switch it sets is turned back to its default — every switch
here must move them by much more than 1e-4, or the fixture would not test it.

Batches are padded on the right, for decoder-only models too (position ids 0..n-1 then equal
the unpadded text's; left padding would leave fully masked query rows, which transformers
fills with a uniform row — see reference.json "padding").
"""

import json
import pathlib
import shutil
import sys
import tempfile

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_hf_fixtures import (  # noqa: E402  (the shared corpus, tokenizers and case runners)
    ANIMAL_EN,
    ANIMAL_KO,
    CORPUS,
    GIVE_EN,
    GIVE_KO,
    fast,
    record,
    run_encoder_cases,
    run_seq2seq_cases,
    wordpiece_tokenizer,
)
from safetensors.torch import save_file  # noqa: E402
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers  # noqa: E402
import transformers  # noqa: E402
from transformers import (  # noqa: E402
    DistilBertConfig,
    DistilBertForMaskedLM,
    DistilBertModel,
    ElectraConfig,
    ElectraForPreTraining,
    ElectraModel,
    GPT2Config,
    GPT2LMHeadModel,
    GPT2Model,
    GPTNeoConfig,
    GPTNeoForCausalLM,
    GPTNeoModel,
    GPTNeoXConfig,
    GPTNeoXForCausalLM,
    GPTNeoXModel,
    LlamaConfig,
    LlamaForCausalLM,
    LlamaModel,
    LlamaTokenizer,
    MistralConfig,
    MistralForCausalLM,
    MistralModel,
    Qwen2Config,
    Qwen2ForCausalLM,
    Qwen2Model,
    RobertaConfig,
    RobertaForMaskedLM,
    RobertaModel,
    T5Config,
    T5ForConditionalGeneration,
    T5Model,
    T5Tokenizer,
    XLMRobertaConfig,
    XLMRobertaModel,
    XLMRobertaTokenizer,
)

torch.set_num_threads(1)
transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "hf"

ENCODER_BATCHES = [[ANIMAL_KO], [ANIMAL_EN], [ANIMAL_KO, GIVE_EN]]
DECODER_BATCHES = [[ANIMAL_KO], [ANIMAL_EN], [ANIMAL_EN, GIVE_EN]]
# SentencePiece Unigram stops at about 86 pieces on this corpus, so English runs to ~50 tokens:
# these families take the shorter English sentence to keep the references small.
UNIGRAM_BATCHES = [[ANIMAL_KO], [GIVE_EN], [ANIMAL_KO, GIVE_EN]]
UNIGRAM_PAIRS = [([GIVE_KO], [GIVE_EN]), ([ANIMAL_KO, GIVE_KO], [GIVE_EN, "Attention is all you need."])]
# Large enough that attention logits are O(1) at these widths (see the module doc).
INIT = 0.25


def seed(n):
    torch.manual_seed(n)


# --- saving and the reference ---

def save(model, folder, dtype, **kw):
    """Rounds the weights to `dtype` and saves them so (plus any `max_shard_size`)."""
    model.to(dtype).save_pretrained(folder, safe_serialization=True, **kw)


def edit_config(folder, change):
    """Rewrites config.json, e.g. into the older form checkpoints on the Hub still have."""
    path = folder / "config.json"
    cfg = json.loads(path.read_text())
    change(cfg)
    path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")


def load_back(base_cls, folder, config=None, **kw):
    """The base model, as transformers loads it from the folder, in float32, eager attention.
    Refuses a checkpoint that would leave any base weight freshly initialised."""
    extra = {"config": config} if config is not None else {}
    model, info = base_cls.from_pretrained(
        folder, attn_implementation="eager", dtype=torch.float32, output_loading_info=True, **extra, **kw
    )
    if info["missing_keys"] or info["mismatched_keys"]:
        raise SystemExit(f"{folder.name}: {base_cls.__name__} did not load every weight: {info}")
    return model.eval()


def write_reference(folder, cases, tensors, meta):
    reference = {
        "transformers": transformers.__version__,
        "torch": torch.__version__.split("+")[0],
        **meta,
        "cases": cases,
    }
    (folder / "reference.json").write_text(json.dumps(reference, ensure_ascii=False, indent=1) + "\n")
    save_file({k: v.contiguous().to(torch.float32) for k, v in tensors.items()}, folder / "reference.safetensors")


def meta_of(t, switches):
    """What reference.json says beside the cases: how batches were padded, which switches are set."""
    return {"padding": {"side": "right", "pad_token_id": t.pad_token_id, "pad_token": t.pad_token}, "switches": switches}


def check_lengths(t, texts, limit):
    for text in texts:
        n = len(t(text)["input_ids"])
        assert n <= limit, f"{text!r}: {n} positions > {limit}"


# --- how much each switch matters ---

def attentions_of(model, t, batches, seq2seq=False):
    if seq2seq:
        _, tensors = run_seq2seq_cases(model, t, t, model.config.decoder_start_token_id, model.config.pad_token_id, batches)
    else:
        _, tensors = run_encoder_cases(model, t, batches)
    return {k: v for k, v in tensors.items() if "attentions" in k}


def sensitivity(folder, base_cls, t, batches, reference, flips, seq2seq=False, **kw):
    """Max |Δ attention| when each switch goes back to its default: each must be >> 1e-4."""
    config_json = json.loads((folder / "config.json").read_text())
    out = {}
    for label, change in flips.items():
        cfg = dict(config_json)
        change(cfg)
        config = base_cls.config_class.from_dict(cfg)
        model = load_back(base_cls, folder, config=config, **kw)
        with torch.no_grad():
            got = attentions_of(model, t, batches, seq2seq)
        out[label] = max((got[k] - reference[k]).abs().max().item() for k in got)
    return out


# --- tokenizers ---

def spm_bytes(model_type, vocab_size, **ids):
    """A SentencePiece model trained on the corpus (as real XLM-R, T5 and Llama ship)."""
    import sentencepiece as spm

    with tempfile.TemporaryDirectory() as tmp:
        corpus = pathlib.Path(tmp) / "corpus.txt"
        corpus.write_text("\n".join(CORPUS * 3) + "\n")
        spm.SentencePieceTrainer.train(
            input=str(corpus), model_prefix=str(pathlib.Path(tmp) / "m"), vocab_size=vocab_size, model_type=model_type,
            character_coverage=1.0, hard_vocab_limit=False, minloglevel=2, **ids,
        )
        return (pathlib.Path(tmp) / "m.model").read_bytes()


def from_spm(cls, filename, spm, **kw):
    """transformers' own conversion of a .model file into its tokenizer (tokenizer.json form)."""
    with tempfile.TemporaryDirectory() as tmp:
        (pathlib.Path(tmp) / filename).write_bytes(spm)
        return cls.from_pretrained(tmp, **kw)


def xlmr_tokenizer():
    # Unigram with SentencePiece's nmt_nfkc Precompiled normalizer and Metaspace, like xlm-roberta-base
    return from_spm(XLMRobertaTokenizer, "sentencepiece.bpe.model", spm_bytes("unigram", 200))


def t5_tokenizer():
    # <pad> 0, </s> 1, <unk> 2, the pieces, then <extra_id_2> … <extra_id_0>, like t5-small; without
    # the ~240 KB Precompiled normalizer (xlm-roberta has one), so the tokenizer.json stays small
    spm = spm_bytes("unigram", 200, pad_id=0, eos_id=1, unk_id=2, bos_id=-1, normalization_rule_name="identity")
    return from_spm(T5Tokenizer, "spiece.model", spm, extra_ids=3)


def llama_spm_tokenizer(hub_form):
    """SentencePiece BPE with byte fallback (<unk> 0, <s> 1, </s> 2, <0x00>…<0xFF>), BOS added.
    hub_form: TinyLlama / Llama-2 tokenizer.json (Prepend + Replace normalizer, no
    pre-tokenizer); otherwise what transformers 5 writes (Metaspace pre-tokenizer)."""
    spm = spm_bytes("bpe", 400, byte_fallback=True, unk_id=0, bos_id=1, eos_id=2, pad_id=-1)
    hf = from_spm(LlamaTokenizer, "tokenizer.model", spm, legacy=hub_form)
    tok = Tokenizer.from_str(hf.backend_tokenizer.to_str())
    if hub_form:
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
        tok.pre_tokenizer = None
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)])
    return tok


QWEN2_SPLIT = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""


def qwen2_tokenizer():
    """Byte-level BPE with Qwen2's NFC normalizer and split regex; no BOS."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


def byte_bpe_tokenizer(specials, roberta):
    """Byte-level BPE as GPT-2, RoBERTa, GPT-Neo and Pythia ship it; 400 entries keep the test
    texts at about 20 tokens (320, as make_hf_fixtures.py uses, gives 30–45)."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    if roberta:
        tok.post_processor = processors.RobertaProcessing(("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")), trim_offsets=True)
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return tok


def saved(folder, tok):
    tok.save(str(folder / "tokenizer.json"))
    return tok


# --- encoders ---

def roberta(folder):
    seed(11)
    tok = saved(folder, byte_bpe_tokenizer(["<s>", "<pad>", "</s>", "<unk>", "<mask>"], roberta=True))
    t = fast(tok, bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>", pad_token="<pad>", unk_token="<unk>", mask_token="<mask>")
    # positions start at pad_token_id + 1 = 2, so max_position_embeddings is the longest text + 2 (roberta-base: 514)
    cfg = RobertaConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
                        max_position_embeddings=66, type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
                        layer_norm_eps=1e-5, initializer_range=INIT, attn_implementation="eager")
    check_lengths(t, CORPUS, 64)
    save(RobertaForMaskedLM(cfg), folder, torch.float32)
    model = load_back(RobertaModel, folder, add_pooling_layer=False)
    cases, tensors = run_encoder_cases(model, t, ENCODER_BATCHES)
    # The position offset cannot be switched off by config; shifting it by one shows what it is worth.
    offset = shifted_positions(model, t, tensors)
    switches = {"pad_token_id": 1, "position_ids": "padding_idx + 1 + index for tokens != pad; padding_idx at pads", "type_vocab_size": 1}
    return cases, tensors, {**meta_of(t, switches), "base_model": "RobertaModel", "saved_as": "RobertaForMaskedLM"}, {"positions from 0 instead of pad+1": offset}


def shifted_positions(model, t, reference, batches=ENCODER_BATCHES):
    got = {}
    for n, texts in enumerate(batches):
        enc = t(texts, padding=True, return_tensors="pt")
        pos = torch.arange(enc["input_ids"].shape[1]).expand_as(enc["input_ids"])
        with torch.no_grad():
            out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"], position_ids=pos, output_attentions=True)
        record(got, f"case{n}", out)
    return max((got[k] - reference[k]).abs().max().item() for k in got if "attentions" in k)


def xlm_roberta(folder):
    seed(12)
    t = xlmr_tokenizer()
    saved(folder, Tokenizer.from_str(t.backend_tokenizer.to_str()))
    cfg = XLMRobertaConfig(vocab_size=len(t), hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=48,
                           max_position_embeddings=82, type_vocab_size=1, pad_token_id=t.pad_token_id, bos_token_id=0, eos_token_id=2,
                           layer_norm_eps=1e-5, initializer_range=INIT, attn_implementation="eager")
    check_lengths(t, CORPUS, 80)
    # the base model with its pooler, as sentence-embedding exports ship it: keys without a prefix
    save(XLMRobertaModel(cfg), folder, torch.float16)
    model = load_back(XLMRobertaModel, folder)
    cases, tensors = run_encoder_cases(model, t, UNIGRAM_BATCHES)
    offset = shifted_positions(model, t, tensors, UNIGRAM_BATCHES)
    switches = {"pad_token_id": t.pad_token_id, "tokenizer": "Unigram + Precompiled(nmt_nfkc) + Metaspace, <s> $A </s>"}
    return cases, tensors, {**meta_of(t, switches), "base_model": "XLMRobertaModel", "saved_as": "XLMRobertaModel (with pooler)"}, {"positions from 0 instead of pad+1": offset}


def distilbert(folder):
    seed(13)
    tok, specials = wordpiece_tokenizer()
    saved(folder, tok)
    t = fast(tok, **specials)
    cfg = DistilBertConfig(vocab_size=tok.get_vocab_size(), dim=32, n_layers=2, n_heads=4, hidden_dim=48, max_position_embeddings=64,
                           sinusoidal_pos_embds=False, activation="gelu", pad_token_id=0, initializer_range=INIT, attn_implementation="eager")
    check_lengths(t, CORPUS, 64)
    save(DistilBertForMaskedLM(cfg), folder, torch.float32)
    model = load_back(DistilBertModel, folder)
    cases, tensors = run_encoder_cases(model, t, ENCODER_BATCHES)
    flips = {"activation gelu -> relu": lambda c: c.update(activation="relu")}
    sens = sensitivity(folder, DistilBertModel, t, ENCODER_BATCHES, tensors, flips)
    switches = {"dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 48, "sinusoidal_pos_embds": False}
    return cases, tensors, {**meta_of(t, switches), "base_model": "DistilBertModel", "saved_as": "DistilBertForMaskedLM"}, sens


def electra(folder):
    seed(14)
    tok, specials = wordpiece_tokenizer()
    saved(folder, tok)
    t = fast(tok, **specials)
    cfg = ElectraConfig(vocab_size=tok.get_vocab_size(), embedding_size=16, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=48, max_position_embeddings=64, type_vocab_size=2, pad_token_id=0,
                        initializer_range=INIT, attn_implementation="eager")
    check_lengths(t, CORPUS, 64)
    save(ElectraForPreTraining(cfg), folder, torch.bfloat16)  # the discriminator
    model = load_back(ElectraModel, folder)
    cases, tensors = run_encoder_cases(model, t, ENCODER_BATCHES)
    switches = {"embedding_size": 16, "hidden_size": 32, "embeddings_project": "Linear(16 -> 32) after the embedding LayerNorm"}
    return cases, tensors, {**meta_of(t, switches), "base_model": "ElectraModel", "saved_as": "ElectraForPreTraining (discriminator)"}, {}


# --- decoder-only ---

def gpt_neox(folder, parallel=True):
    seed(21 if parallel else 22)
    tok = saved(folder, byte_bpe_tokenizer(["<|endoftext|>", "<|padding|>"], roberta=False))
    t = fast(tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>", unk_token="<|endoftext|>", pad_token="<|endoftext|>")
    common = dict(vocab_size=tok.get_vocab_size(), hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=128,
                  max_position_embeddings=64, bos_token_id=0, eos_token_id=0, initializer_range=INIT, attn_implementation="eager")
    if parallel:
        # Pythia: head_size 16, rotary_pct 0.25 -> the first 4 dims of each head rotate
        cfg = GPTNeoXConfig(**common, rotary_pct=0.25, rotary_emb_base=10000, use_parallel_residual=True)
    else:
        cfg = GPTNeoXConfig(**common, rotary_pct=0.5, rotary_emb_base=5000, use_parallel_residual=False)
    check_lengths(t, CORPUS, 64)
    save(GPTNeoXForCausalLM(cfg), folder, torch.float16)
    if parallel:
        # config.json as Pythia's: rotary_pct / rotary_emb_base at the top level, no rope_parameters
        def pythia(c):
            rope = c.pop("rope_parameters")
            c["rotary_pct"], c["rotary_emb_base"] = rope["partial_rotary_factor"], rope["rope_theta"]
        edit_config(folder, pythia)
    model = load_back(GPTNeoXModel, folder)
    assert model.config.rope_parameters["partial_rotary_factor"] == cfg.rope_parameters["partial_rotary_factor"]
    cases, tensors = run_encoder_cases(model, t, DECODER_BATCHES)

    def rope(c, **kw):
        if "rope_parameters" in c:
            c["rope_parameters"] = {**c["rope_parameters"], **kw}
        else:
            c.update({"rotary_pct": kw.get("partial_rotary_factor", c["rotary_pct"]), "rotary_emb_base": kw.get("rope_theta", c["rotary_emb_base"])})

    flips = {
        "full rotary (pct 1.0)": lambda c: rope(c, partial_rotary_factor=1.0),
        "rope base 10000 <-> 5000": lambda c: rope(c, rope_theta=5000.0 if parallel else 10000.0),
        "use_parallel_residual flipped": lambda c: c.update(use_parallel_residual=not parallel),
    }
    sens = sensitivity(folder, GPTNeoXModel, t, DECODER_BATCHES, tensors, flips)
    switches = {"rotary_pct": cfg.rope_parameters["partial_rotary_factor"], "rotary_emb_base": cfg.rope_parameters["rope_theta"],
                "use_parallel_residual": parallel, "config_form": "Pythia (rotary_pct, rotary_emb_base)" if parallel else "transformers 5 (rope_parameters)"}
    return cases, tensors, {**meta_of(t, switches), "base_model": "GPTNeoXModel", "saved_as": "GPTNeoXForCausalLM"}, sens


def gpt_neox_sequential(folder):
    return gpt_neox(folder, parallel=False)


def gpt_neox_odd_rotary(folder):
    """head_size 6 with partial_rotary_factor 0.5: transformers' dim = int(6 * 0.5) = 3 is odd,
    so inv_freq has ceil(3/2) = 2 frequencies (exponents over 3) and cat((freqs, freqs)) turns
    4 dimensions of each head. Config in transformers 5 form (rope_parameters)."""
    seed(24)
    tok = saved(folder, byte_bpe_tokenizer(["<|endoftext|>", "<|padding|>"], roberta=False))
    t = fast(tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>", unk_token="<|endoftext|>", pad_token="<|endoftext|>")
    cfg = GPTNeoXConfig(vocab_size=tok.get_vocab_size(), hidden_size=24, num_hidden_layers=2, num_attention_heads=4, intermediate_size=96,
                        max_position_embeddings=64, bos_token_id=0, eos_token_id=0, initializer_range=INIT, attn_implementation="eager",
                        rotary_pct=0.5, rotary_emb_base=100, use_parallel_residual=True)
    check_lengths(t, CORPUS, 64)
    save(GPTNeoXForCausalLM(cfg), folder, torch.float32)
    model = load_back(GPTNeoXModel, folder)
    rotary = model.rotary_emb.inv_freq
    assert rotary.shape == (2,), f"expected 2 frequencies for dim 3, got {rotary.tolist()}"
    cases, tensors = run_encoder_cases(model, t, DECODER_BATCHES)

    def rope(**kw):
        return lambda c: c.update(rope_parameters={**c["rope_parameters"], **kw})

    # each alternative reading of an odd dim must move the weights: 4 dims over 4 (pct 4/6),
    # 2 dims over 2 (pct 0.34: the odd dim rounded down)
    flips = {
        "dim 3 -> 4: 4 dims turn, exponents over 4": rope(partial_rotary_factor=0.67),
        "dim 3 -> 2: 2 dims turn": rope(partial_rotary_factor=0.34),
    }
    sens = sensitivity(folder, GPTNeoXModel, t, DECODER_BATCHES, tensors, flips)
    switches = {"head_size": 6, "partial_rotary_factor": 0.5, "rope_theta": 100, "rotated_dims": 4, "inv_freq": rotary.tolist(),
                "config_form": "transformers 5 (rope_parameters)"}
    return cases, tensors, {**meta_of(t, switches), "base_model": "GPTNeoXModel", "saved_as": "GPTNeoXForCausalLM"}, sens


def gpt_neo(folder):
    seed(23)
    tok = saved(folder, byte_bpe_tokenizer(["<|endoftext|>"], roberta=False))
    t = fast(tok, eos_token="<|endoftext|>", bos_token="<|endoftext|>", unk_token="<|endoftext|>", pad_token="<|endoftext|>")
    eos = tok.token_to_id("<|endoftext|>")
    cfg = GPTNeoConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, num_layers=2, num_heads=4, attention_types=[[["global", "local"], 1]],
                       window_size=4, max_position_embeddings=64, bos_token_id=eos, eos_token_id=eos, initializer_range=INIT,
                       attn_implementation="eager")
    check_lengths(t, CORPUS, 64)
    save(GPTNeoForCausalLM(cfg), folder, torch.float32)
    model = load_back(GPTNeoModel, folder)
    cases, tensors = run_encoder_cases(model, t, DECODER_BATCHES)
    flips = {
        "window_size 4 -> 256": lambda c: c.update(window_size=256),
        # a saved attention_layers wins over attention_types in transformers 5: change both
        "both layers global": lambda c: c.update(attention_types=[[["global"], 2]], attention_layers=["global", "global"]),
    }
    sens = sensitivity(folder, GPTNeoModel, t, DECODER_BATCHES, tensors, flips)
    switches = {"attention_types": [[["global", "local"], 1]], "window_size": 4, "scaling": "none (no ÷√d_k)"}
    return cases, tensors, {**meta_of(t, switches), "base_model": "GPTNeoModel", "saved_as": "GPTNeoForCausalLM"}, sens


def llama_like(folder, cfg_cls, task_cls, base_cls, tok, t, dtype, cfg_kw, flips, switches, config_edit=None):
    cfg = cfg_cls(vocab_size=tok.get_vocab_size(), hidden_size=32, intermediate_size=48, num_hidden_layers=2, max_position_embeddings=64,
                  initializer_range=INIT, attn_implementation="eager", **cfg_kw)
    check_lengths(t, CORPUS, 64)
    save(task_cls(cfg), folder, dtype)
    if config_edit:
        edit_config(folder, config_edit)
    model = load_back(base_cls, folder)
    cases, tensors = run_encoder_cases(model, t, DECODER_BATCHES)
    sens = sensitivity(folder, base_cls, t, DECODER_BATCHES, tensors, flips)
    meta = {**meta_of(t, switches), "base_model": base_cls.__name__, "saved_as": task_cls.__name__}
    return cases, tensors, meta, sens


def llama_tok(folder, hub_form):
    tok = saved(folder, llama_spm_tokenizer(hub_form))
    return tok, fast(tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="</s>")


def with_rope(**kw):
    def change(c):
        if "rope_parameters" in c:
            c["rope_parameters"] = {**c["rope_parameters"], **kw}
        else:  # the Hub's form: rope_theta + rope_scaling
            if "rope_theta" in kw:
                c["rope_theta"] = kw["rope_theta"]
            if kw.get("rope_type") == "default":
                c["rope_scaling"] = None
    return change


def llama(folder):
    """GQA 4 query heads / 2 KV heads, rope_theta 500000, linear RoPE scaling ×2; config in transformers 5 form."""
    seed(31)
    tok, t = llama_tok(folder, hub_form=True)
    kw = dict(num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False,
              rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 500000.0})
    flips = {"rope_type linear -> default": lambda c: c.update(rope_parameters={"rope_type": "default", "rope_theta": 500000.0}),
             "rope_theta 500000 -> 10000": with_rope(rope_theta=10000.0)}
    switches = {"num_attention_heads": 4, "num_key_value_heads": 2, "rope_parameters": kw["rope_parameters"], "rms_norm_eps": 1e-5,
                "tokenizer": "SentencePiece BPE, byte fallback, TinyLlama's tokenizer.json form, <s> prepended", "config_form": "transformers 5 (rope_parameters)"}
    return llama_like(folder, LlamaConfig, LlamaForCausalLM, LlamaModel, tok, t, torch.bfloat16, kw, flips, switches)


def llama3(folder):
    """Llama 3.1/3.2-style RoPE ('llama3' scaling, factor 8, low 1, high 4, theta 500000) with
    original_max_position_embeddings 64 instead of 8192, so that at these lengths one frequency is
    kept, one smoothed and six divided; head_dim 16, tied embeddings, 2 query heads on 1 KV head;
    config.json in the Hub's form (rope_theta + rope_scaling)."""
    seed(32)
    tok, t = llama_tok(folder, hub_form=False)
    scaling = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 64}
    kw = dict(num_attention_heads=2, num_key_value_heads=1, rms_norm_eps=1e-5, bos_token_id=1, eos_token_id=2, tie_word_embeddings=True,
              rope_parameters={**scaling, "rope_theta": 500000.0})

    def hub(c):
        rope = c.pop("rope_parameters")
        c["rope_theta"] = rope.pop("rope_theta")
        c["rope_scaling"] = rope

    def unscaled(c):
        c["rope_scaling"] = None

    def as_linear(c):
        c["rope_scaling"] = {"rope_type": "linear", "factor": 8.0}

    def smooth_as_kept(c):  # high_freq_factor 4 -> 2: the smoothed frequency (wavelength 32) is kept instead
        c["rope_scaling"] = {**c["rope_scaling"], "high_freq_factor": 2.0}

    flips = {"rope_scaling llama3 -> none": unscaled, "rope_scaling llama3 -> linear x8": as_linear,
             "high_freq_factor 4 -> 2": smooth_as_kept}
    switches = {"num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 16, "rope_theta": 500000.0, "rope_scaling": scaling,
                "tie_word_embeddings": True, "config_form": "Hub (rope_theta + rope_scaling)",
                "tokenizer": "SentencePiece BPE, byte fallback, transformers 5's Metaspace form, <s> prepended"}
    return llama_like(folder, LlamaConfig, LlamaForCausalLM, LlamaModel, tok, t, torch.float32, kw, flips, switches, config_edit=hub)


def llama_sharded(folder):
    """The `llama` model again, saved in several shards with model.safetensors.index.json."""
    seed(31)
    tok, t = llama_tok(folder, hub_form=True)
    kw = dict(num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5, bos_token_id=1, eos_token_id=2, tie_word_embeddings=False,
              rope_parameters={"rope_type": "linear", "factor": 2.0, "rope_theta": 500000.0})
    cfg = LlamaConfig(vocab_size=tok.get_vocab_size(), hidden_size=32, intermediate_size=48, num_hidden_layers=2, max_position_embeddings=64,
                      initializer_range=INIT, attn_implementation="eager", **kw)
    save(LlamaForCausalLM(cfg), folder, torch.bfloat16, max_shard_size="20KB")
    model = load_back(LlamaModel, folder)
    cases, tensors = run_encoder_cases(model, t, DECODER_BATCHES)
    same = OUT / "llama" / "reference.safetensors"
    if same.exists():
        from safetensors.torch import load_file

        other = load_file(same)
        diff = max((other[k] - tensors[k]).abs().max().item() for k in tensors)
        assert diff == 0.0, f"llama-sharded differs from llama by {diff}"
    shards = sorted(p.name for p in folder.glob("model-*.safetensors"))
    meta = {**meta_of(t, {"shards": len(shards), "same_model_as": "llama"}), "base_model": "LlamaModel", "saved_as": "LlamaForCausalLM"}
    return cases, tensors, meta, {}


def qwen2(folder):
    """q/k/v biases, GQA 4/2, rope_theta 1e6, tied embeddings, and a sliding_window that is
    present but off (use_sliding_window false), as every Qwen2 config.json has it."""
    seed(33)
    tok = saved(folder, qwen2_tokenizer())
    t = fast(tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>", unk_token="<|endoftext|>")
    eos = tok.token_to_id("<|endoftext|>")
    kw = dict(num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-6, bos_token_id=eos, eos_token_id=eos, tie_word_embeddings=True,
              rope_parameters={"rope_type": "default", "rope_theta": 1000000.0}, use_sliding_window=False)

    def hub(c):  # Qwen2-0.5B's form: rope_theta at the top, sliding_window set, max_window_layers, no layer_types
        c["rope_theta"] = c.pop("rope_parameters")["rope_theta"]
        c.pop("layer_types", None)
        c.update(sliding_window=4, max_window_layers=1, use_sliding_window=False)

    flips = {"use_sliding_window true (window 4 from layer 1)": lambda c: c.update(use_sliding_window=True),
             "rope_theta 1e6 -> 10000": with_rope(rope_theta=10000.0)}
    switches = {"attention_bias": "q/k/v have biases, o_proj none", "num_key_value_heads": 2, "rope_theta": 1000000.0,
                "use_sliding_window": False, "sliding_window": 4, "max_window_layers": 1, "tie_word_embeddings": True,
                "config_form": "Hub (rope_theta, no layer_types)", "tokenizer": "byte-level BPE, NFC, Qwen2 split regex, no BOS"}
    return llama_like(folder, Qwen2Config, Qwen2ForCausalLM, Qwen2Model, tok, t, torch.float32, kw, flips, switches, config_edit=hub)


def mistral(folder):
    """sliding_window 5 (applied by the eager mask), head_dim 16 != hidden/heads, one KV head."""
    seed(34)
    tok, t = llama_tok(folder, hub_form=False)
    kw = dict(num_attention_heads=4, num_key_value_heads=1, head_dim=16, rms_norm_eps=1e-5, bos_token_id=1, eos_token_id=2,
              tie_word_embeddings=False, sliding_window=5, rope_parameters={"rope_type": "default", "rope_theta": 1000000.0})
    flips = {"sliding_window 5 -> null": lambda c: c.update(sliding_window=None)}
    switches = {"sliding_window": 5, "num_attention_heads": 4, "num_key_value_heads": 1, "head_dim": 16, "rope_theta": 1000000.0}
    return llama_like(folder, MistralConfig, MistralForCausalLM, MistralModel, tok, t, torch.float16, kw, flips, switches)


def gpt2_inverse_layer(folder):
    seed(35)
    tok = saved(folder, byte_bpe_tokenizer(["<|endoftext|>"], roberta=False))
    eos = tok.token_to_id("<|endoftext|>")
    t = fast(tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>", bos_token="<|endoftext|>")
    cfg = GPT2Config(vocab_size=tok.get_vocab_size(), n_embd=32, n_layer=3, n_head=4, n_positions=64, bos_token_id=eos, eos_token_id=eos,
                     scale_attn_by_inverse_layer_idx=True, reorder_and_upcast_attn=True, initializer_range=INIT, attn_implementation="eager")
    check_lengths(t, CORPUS, 64)
    save(GPT2LMHeadModel(cfg), folder, torch.float32)
    model = load_back(GPT2Model, folder)
    cases, tensors = run_encoder_cases(model, t, DECODER_BATCHES)
    flips = {"scale_attn_by_inverse_layer_idx false": lambda c: c.update(scale_attn_by_inverse_layer_idx=False),
             "reorder_and_upcast_attn false (f32: no change expected)": lambda c: c.update(reorder_and_upcast_attn=False)}
    sens = sensitivity(folder, GPT2Model, t, DECODER_BATCHES, tensors, flips)
    switches = {"scale_attn_by_inverse_layer_idx": True, "reorder_and_upcast_attn": True, "n_layer": 3}
    return cases, tensors, {**meta_of(t, switches), "base_model": "GPT2Model", "saved_as": "GPT2LMHeadModel"}, sens


# --- T5 ---

def t5_model(folder, gated):
    seed(41 if gated else 42)
    t = t5_tokenizer()
    saved(folder, Tokenizer.from_str(t.backend_tokenizer.to_str()))
    common = dict(vocab_size=len(t), d_model=32, d_kv=8, d_ff=48, num_layers=2, relative_attention_num_buckets=8,
                  relative_attention_max_distance=20, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0, attn_implementation="eager")
    if gated:  # t5-v1_1 / flan-t5: gated-gelu, inner dim (heads × d_kv) != d_model, untied head, 3 decoder layers
        cfg = T5Config(**common, num_heads=3, num_decoder_layers=3, feed_forward_proj="gated-gelu", tie_word_embeddings=False)
    else:
        cfg = T5Config(**common, num_heads=4, feed_forward_proj="relu")
    check_lengths(t, CORPUS, 10_000)
    task = T5ForConditionalGeneration(cfg)
    save(task, folder, torch.bfloat16 if gated else torch.float32)
    if gated:
        # transformers 5 always ties T5's head and writes `tie_word_embeddings: true` with
        # `scale_decoder_outputs: false`; t5-v1_1 / flan-t5 ship the older form and their own lm_head
        edit_config(folder, t5_v1_1_form)
        add_tensor(folder / "model.safetensors", "lm_head.weight", torch.randn(cfg.vocab_size, cfg.d_model).to(torch.bfloat16))
    model = load_back(T5Model, folder)
    cases, tensors = run_seq2seq_cases(model, t, t, cfg.decoder_start_token_id, cfg.pad_token_id, UNIGRAM_PAIRS)
    # (num_buckets cannot be flipped: it is the bias table's row count; zeroing the table stands in)
    flips = {"relative_attention_max_distance 20 -> 128": lambda c: c.update(relative_attention_max_distance=128)}
    sens = sensitivity(folder, T5Model, t, UNIGRAM_PAIRS, tensors, flips, seq2seq=True)
    sens["the bias table itself"] = bias_off(model, t, tensors)
    switches = {"relative_attention_num_buckets": 8, "relative_attention_max_distance": 20, "num_layers": 2, "num_decoder_layers": cfg.num_decoder_layers,
                "config_form": "t5-v1_1 (tie_word_embeddings false, own lm_head.weight)" if gated else "transformers 5",
                "num_heads": cfg.num_heads, "d_kv": 8, "feed_forward_proj": cfg.feed_forward_proj, "scaling": "none (no ÷√d_k)",
                "decoder_start_token_id": cfg.decoder_start_token_id}
    meta = {**meta_of(t, switches), "decoder_start_token_id": cfg.decoder_start_token_id, "base_model": "T5Model",
            "saved_as": "T5ForConditionalGeneration", "teacher_forcing": "decoder_input_ids = [decoder_start] + labels[:-1]"}
    return cases, tensors, meta, sens


def t5_v1_1_form(c):
    c["tie_word_embeddings"] = False
    for key in ("scale_decoder_outputs", "dense_act_fn", "is_gated_act"):
        c.pop(key)


def add_tensor(path, name, tensor):
    from safetensors.torch import load_file

    tensors = load_file(path)
    tensors[name] = tensor
    save_file(tensors, path, metadata={"format": "pt"})


def bias_off(model, t, reference):
    """How much the relative position bias moves the weights: zero the table and compare."""
    saved_weights = [m.relative_attention_bias.weight.clone() for m in model.modules() if getattr(m, "has_relative_attention_bias", False)]
    for m in model.modules():
        if getattr(m, "has_relative_attention_bias", False):
            m.relative_attention_bias.weight.data.zero_()
    with torch.no_grad():
        got = attentions_of(model, t, UNIGRAM_PAIRS, seq2seq=True)
    for m, w in zip([m for m in model.modules() if getattr(m, "has_relative_attention_bias", False)], saved_weights):
        m.relative_attention_bias.weight.data.copy_(w)
    return max((got[k] - reference[k]).abs().max().item() for k in got if "cross" not in k)


def t5(folder):
    return t5_model(folder, gated=False)


def t5_v1_1(folder):
    return t5_model(folder, gated=True)


MAKERS = {
    "roberta": roberta,
    "xlm-roberta": xlm_roberta,
    "distilbert": distilbert,
    "electra": electra,
    "gpt_neox": gpt_neox,
    "gpt_neox-sequential": gpt_neox_sequential,
    "gpt_neox-odd-rotary": gpt_neox_odd_rotary,
    "gpt_neo": gpt_neo,
    "llama": llama,
    "llama3": llama3,
    "llama-sharded": llama_sharded,
    "qwen2": qwen2,
    "mistral": mistral,
    "t5": t5,
    "t5-v1_1": t5_v1_1,
    "gpt2-inverse-layer": gpt2_inverse_layer,
}


def check_reference(folder):
    """The reference loads back, its shapes agree with its cases, and every row sums to 1."""
    from safetensors.torch import load_file

    reference = json.loads((folder / "reference.json").read_text())
    tensors = load_file(folder / "reference.safetensors")
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))  # as tokenizer.json alone encodes, like headmap
    for n, case in enumerate(reference["cases"]):
        texts = case.get("texts") or case["sources"]
        for text, ids, mask in zip(texts, case["input_ids"], case["attention_mask"]):
            want = [i for i, m in zip(ids, mask) if m == 1]
            assert tok.encode(text).ids == want, f"tokenizer.json alone encodes {text!r} otherwise"
        b, s = len(case["input_ids"]), len(case["input_ids"][0])
        t = len(case["decoder_input_ids"][0]) if "decoder_input_ids" in case else s
        shapes = {"attentions": (s, s), "encoder_attentions": (s, s), "decoder_attentions": (t, t), "cross_attentions": (t, s)}
        for key, a in tensors.items():
            prefix, kind = key.split(".")[:2]
            if prefix != f"case{n}" or kind not in shapes:
                continue
            assert a.shape[0] == b and tuple(a.shape[2:]) == shapes[kind], (key, tuple(a.shape))
            assert torch.isfinite(a).all(), key
            assert (a.sum(-1) - 1).abs().max() < 1e-5, f"{key}: rows do not sum to 1"
    return len(reference["cases"]), len(tensors)


def main():
    names = sys.argv[1:] or list(MAKERS)
    unknown = [n for n in names if n not in MAKERS]
    if unknown:
        raise SystemExit(f"unknown fixture(s) {unknown}; known: {list(MAKERS)}")
    for name in names:
        folder = OUT / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        cases, tensors, meta, sens = MAKERS[name](folder)
        write_reference(folder, cases, tensors, meta)
        for f in folder.iterdir():
            f.chmod(0o644)
        n_cases, n_tensors = check_reference(folder)
        size = sum(f.stat().st_size for f in folder.iterdir())
        peak = max(a.max(-1).values.mean().item() for k, a in tensors.items() if "attentions" in k)
        print(f"{name}: {n_cases} cases, {n_tensors} tensors, {size} bytes; mean row max of the peakiest layer {peak:.2f}")
        for label, d in sens.items():
            flag = "" if d > 1e-3 or "no change expected" in label else "   <-- weak"
            print(f"    {label}: max |Δ attention| {d:.3g}{flag}")


if __name__ == "__main__":
    main()
