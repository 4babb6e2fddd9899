"""What a model predicts and writes, from Python: `Model.predict`, `Model.generate` and
`Model.patch` give the documents `headmap predict`, `headmap generate` and `headmap patch` print,
number for number, for every family fixture and the trained models, with heads off, sampled,
and refused as the command line refuses.

Run by scripts/test-python against the wheel it installs; HEADMAP_CLI names the command line."""

import json

import numpy as np
import pytest

import headmap
from test_native import ENGLISH, FIXTURES, MODELS, REPO, TRANSLATOR, cli, cli_json, text_args

SEED_SENTENCE = "동물이 길을 건너지 않았다. 그것은 너무 피곤했다."
INDUCTION = REPO / "www" / "models" / "headmap-tiny-induction"  # the two-layer model that copies


@pytest.mark.parametrize("family", MODELS)
def test_predictions_equal_the_command_lines(family):
    folder, texts = MODELS[family]
    model = headmap.load(folder)
    args = ("predict", "--model", str(folder), *text_args(texts), "--top-k", "3")
    done = cli(*args)
    if done.returncode != 0:
        # a model without an output head (an encoder), refused in the same words
        with pytest.raises(headmap.HeadmapError) as refused:
            model.predict(texts, top_k=3)
        assert f"headmap: {refused.value}" == done.stderr.strip()
        return
    assert model.predict(texts, top_k=3) == cli_json(*args)


def test_predictions_with_heads_off_and_the_lens_equal_the_command_lines():
    folder = FIXTURES / "gpt2"
    args = ("predict", "--model", str(folder), *text_args(ENGLISH), "--ablate", "0.1,1.0", "--mean-ablation", "--lens")
    ours = headmap.load(folder).predict(ENGLISH, ablate="0.1,1.0", mean_ablation=True, lens=True)
    assert ours == cli_json(*args)
    assert ours["rows"][0]["lens"] and ours["ablated"], "the lens and the heads off are there"
    translated = headmap.load(TRANSLATOR).predict(SEED_SENTENCE, targets="The animal didn't cross the street.")
    want = cli_json("predict", "--model", str(TRANSLATOR), "--text", SEED_SENTENCE, "--target", "The animal didn't cross the street.")
    assert translated == want


@pytest.mark.parametrize("family", MODELS)
def test_greedy_text_equals_the_command_lines(family):
    folder, texts = MODELS[family]
    model = headmap.load(folder)
    args = ("generate", "--model", str(folder), "--text", texts[0], "--max-new-tokens", "6")
    done = cli(*args)
    if done.returncode != 0:
        with pytest.raises(headmap.HeadmapError) as refused:
            model.generate(texts[0], max_new_tokens=6)
        assert f"headmap: {refused.value}" == done.stderr.strip()
        return
    assert model.generate(texts[0], max_new_tokens=6) == cli_json(*args)


def test_the_translator_writes_the_seed_sentences_english():
    written = headmap.load(TRANSLATOR).generate(SEED_SENTENCE, max_new_tokens=30)
    assert written["text"] == "The animal did not cross the street. The animal was too tired."
    assert written["format"] == "headmap.generation" and written["model_type"] == "marian"


def test_sampling_and_heads_off_equal_the_command_lines_and_a_seed_repeats():
    folder = FIXTURES / "gpt2"
    model = headmap.load(folder)
    sampled = dict(max_new_tokens=8, temperature=1.5, top_k=40, top_p=0.9, seed=7)
    args = ("generate", "--model", str(folder), "--text", ENGLISH[0], "--max-new-tokens", "8", "--temperature", "1.5", "--top-k", "40", "--top-p", "0.9", "--seed", "7")
    ours = model.generate(ENGLISH[0], **sampled)
    assert ours == cli_json(*args)
    assert headmap.load(folder, threads=1).generate(ENGLISH[0], **sampled) == ours, "one thread draws what two draw"
    off = model.generate(ENGLISH[0], max_new_tokens=5, ablate="0.0,1.1", mean_ablation=True)
    want = cli_json("generate", "--model", str(folder), "--text", ENGLISH[0], "--max-new-tokens", "5", "--ablate", "0.0,1.1", "--mean-ablation")
    assert off == want and off["ablated"]


def test_the_run_of_a_written_text_has_every_token_and_rows_that_sum_to_one():
    model = headmap.load(FIXTURES / "gpt2")
    written, run = model.generate(ENGLISH[1], max_new_tokens=5, run=True)
    tokens = run.tokens()
    assert len(tokens["queries"]) == len(written["prompt"]) + len(written["generated"])
    weights = run.weights()
    assert weights.dtype == np.float32 and np.isfinite(weights).all()
    assert np.allclose(weights.sum(axis=-1), 1.0, atol=1e-5)
    assert np.all(np.triu(weights[0, 0], k=1) == 0), "the decoder reads no token after its own"
    # an encoder–decoder's run reads the source in its cross-attention
    written, run = headmap.load(TRANSLATOR).generate(SEED_SENTENCE, max_new_tokens=30, run=True)
    assert "cross" in run.places
    assert run.tokens(place="cross")["keys"][: len(written["prompt"])] == written["prompt"]


def test_bad_requests_are_refused_by_name():
    folder = FIXTURES / "gpt2"
    model = headmap.load(folder)
    for kwargs, flags in [
        (dict(temperature=0.0), ("--temperature", "0")),
        (dict(temperature=1.0, top_p=1.5), ("--temperature", "1", "--top-p", "1.5")),
        (dict(ablate="9.9"), ("--ablate", "9.9")),
    ]:
        done = cli("generate", "--model", str(folder), "--text", "hello", *flags)
        assert done.returncode != 0
        with pytest.raises(headmap.HeadmapError) as refused:
            model.generate("hello", **kwargs)
        assert f"headmap: {refused.value}" == done.stderr.strip()
    with pytest.raises(headmap.HeadmapError, match="empty"):
        model.generate("")
    with pytest.raises(ValueError, match="temperature"):
        model.generate("hello", top_k=5)
    with pytest.raises(ValueError, match="top_k"):
        model.predict("hello", top_k=0)
    with pytest.raises(headmap.HeadmapError):
        headmap.load(FIXTURES / "bert").generate("hello")


def test_patching_equals_the_command_lines_and_the_hook_reference():
    # the induction model's head 1.3 (0-based layer 0, head 3) carries the copied word back
    reference = json.loads((REPO / "tests" / "fixtures" / "predict" / "induction-patch.json").read_text())
    asked = {k: reference[k] for k in ("clean", "corrupt", "answer", "wrong")}
    ours = headmap.load(INDUCTION).patch(**asked)
    flags = [x for k, v in asked.items() for x in (f"--{k}", v)]
    assert ours == cli_json("patch", "--model", str(INDUCTION), *flags)
    assert ours["format"] == "headmap.patching"
    for key in ("clean_diff", "corrupt_diff"):
        assert abs(ours[key] - reference[key]) < 1e-3, key
    got, want = np.array(ours["map"]), np.array(reference["map"])
    assert got.shape == want.shape and np.abs(got - want).max() < 1e-3, "every head as the hooks in transformers"
    # an encoder–decoder: the source differs, the target is the same, patched where the decoder reads it
    clean, corrupt, target = "동물이 길을 건너지 않았다.", "동물이 강을 건너지 않았다.", "The animal didn't cross the street."
    translator = headmap.load(TRANSLATOR)
    crossed = translator.patch(clean, corrupt, "street", "river", target=target, place="cross", position=8)
    want = cli_json("patch", "--model", str(TRANSLATOR), "--clean", clean, "--corrupt", corrupt, "--target", target,
                    "--answer", "street", "--wrong", "river", "--place", "cross", "--position", "8")
    assert crossed == want and crossed["place"] == "cross" and crossed["position"] == 8
    assert crossed["clean_diff"] > 0 > crossed["corrupt_diff"]


def test_patching_refuses_what_the_command_line_refuses():
    model = headmap.load(INDUCTION)
    for kwargs, flags in [
        (dict(clean="고양이 공원", corrupt="고양이 길", answer="노래 길", wrong="길"), ()),
        (dict(clean="고양이 공원 노래", corrupt="고양이", answer="노래", wrong="길"), ()),
        (dict(clean="고양이 공원", corrupt="고양이 길", answer="노래", wrong="길"), ("--place", "cross")),
        (dict(clean="고양이 공원", corrupt="고양이 길", answer="노래", wrong="길"), ("--position", "99")),
    ]:
        args = [x for k, v in kwargs.items() for x in (f"--{k}", v)]
        done = cli("patch", "--model", str(INDUCTION), *args, *flags)
        assert done.returncode != 0, (kwargs, flags)
        extra = {flags[0][2:]: (int(flags[1]) if flags[0] == "--position" else flags[1])} if flags else {}
        with pytest.raises(headmap.HeadmapError) as refused:
            model.patch(**kwargs, **extra)
        assert f"headmap: {refused.value}" == done.stderr.strip()
