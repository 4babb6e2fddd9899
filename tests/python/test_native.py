"""headmap's native module from Python, as the installed wheel has it: the same numbers as the
command line bit for bit for every family fixture, errors worded as the command line words
them, the GIL released while the core computes, and the same bits on one thread and on two.

Run by scripts/test-python against the wheel it installs; HEADMAP_CLI names the command line's
binary (the same crate, built by the same script)."""

import json
import os
import pathlib
import shutil
import subprocess
import threading
import time

import numpy as np
import pytest

import headmap

REPO = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "hf"
FAMILIES = sorted(p.name for p in FIXTURES.iterdir() if (p / "config.json").exists())
TRANSLATOR = REPO / "www" / "models" / "headmap-tiny-ko-en"  # the Korean→English model trained here
MINILM = REPO / "models" / "all-MiniLM-L6-v2"  # the default model, fetched by scripts/setup
# a padded batch: the second text is shorter
ENGLISH = ["The animal didn't cross the street because it was tired.", "It was tired."]
KOREAN = ["동물이 길을 건너지 않았다. 그것은 너무 피곤했다.", "그것은 피곤했다."]
MODELS = {**{name: (FIXTURES / name, ENGLISH) for name in FAMILIES}, "headmap-tiny-ko-en": (TRANSLATOR, KOREAN)}


def cli(*args: str) -> subprocess.CompletedProcess:
    binary = os.environ.get("HEADMAP_CLI")
    if not binary or not pathlib.Path(binary).is_file():
        pytest.fail(f"HEADMAP_CLI={binary!r} must name the headmap binary (scripts/test-python builds it)")
    return subprocess.run([binary, *args], capture_output=True, text=True, check=False)


def cli_json(*args: str):
    done = cli(*args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def cli_error(*args: str) -> str:
    done = cli(*args)
    assert done.returncode != 0, f"the command line accepted {args}"
    message = done.stderr.strip()
    assert message.startswith("headmap: "), message
    return message[len("headmap: "):]


def text_args(texts: list[str]) -> list[str]:
    return [a for t in texts for a in ("--text", t)]


def test_every_family_is_here():
    # the parity below is only as wide as the fixtures it runs over
    assert len(FAMILIES) >= 20, FAMILIES


@pytest.mark.parametrize("family", MODELS)
def test_weights_and_tokens_equal_the_command_lines_bit_for_bit(family):
    folder, texts = MODELS[family]
    expected = cli_json("attention", "--model", str(folder), *text_args(texts), "--format", "json")
    model = headmap.load(folder)
    run = model.run(texts)
    assert run.model_type == expected["model_type"]
    assert run.batch == len(texts) == len(expected["rows"])
    for b, row in enumerate(expected["rows"]):
        assert sorted(run.places) == sorted(row["attention"])
        for place, kept in row["attention"].items():
            weights = run.weights(place=place, row=b)
            assert weights.dtype == np.float32
            want = np.array(kept["weights"], dtype=np.float32)
            assert weights.shape == want.shape, (place, b)
            assert np.array_equal(weights, want), f"{family} {place} row {b}: max diff {np.abs(weights - want).max()}"
            tokens = run.tokens(place=place, row=b)
            assert tokens["queries"] == kept["queries"] and tokens["keys"] == kept["keys"]
            assert tokens["query_valid"] == kept["query_valid"] and tokens["key_valid"] == kept["key_valid"]
            assert tokens["mask"] == kept["mask"] and tokens["what_if"] == kept["what_if"]


@pytest.mark.parametrize("family", MODELS)
def test_head_scores_and_rollout_equal_the_command_lines(family):
    folder, texts = MODELS[family]
    model = headmap.load(folder)
    first = model.info["places"][0]["place"]
    expected = cli_json("heads", "--model", str(folder), *text_args(texts), "--queries", "1", "--keys", "0")
    run = model.run(texts)
    for place in expected["places"]:
        for b, row in enumerate(place["rows"]):
            ours = run.heads(place=place["place"], row=b, queries=[1], keys=[0])
            names = set(row["scores"]) | {"mass"}
            assert set(ours) == names, (place["place"], set(ours) ^ names)
            for name, values in row["scores"].items():
                assert np.array_equal(ours[name], np.array(values, dtype=np.float32)), (family, place["place"], b, name)
            assert np.array_equal(ours["mass"], np.array(row["mass"]["values"], dtype=np.float32))
    if first == "cross":
        return
    rolled = cli_json("rollout", "--model", str(folder), *text_args(texts), "--place", first, "--fusion", "max")
    for b, row in enumerate(rolled["rows"]):
        ours = run.rollout(fusion="max", place=first, row=b)
        assert np.array_equal(ours, np.array(row["layers"], dtype=np.float32)), (family, b)


def test_an_encoder_decoder_takes_targets_and_every_place():
    folder = TRANSLATOR
    source, target = "동물이 길을 건너지 않았다.", "The animal didn't cross the street."
    expected = cli_json("attention", "--model", str(folder), "--text", source, "--target", target, "--place", "cross")
    run = headmap.load(folder).run(source, targets=target, place="cross")
    assert run.places == ["cross"]
    kept = expected["rows"][0]["attention"]["cross"]
    assert np.array_equal(run.weights(), np.array(kept["weights"], dtype=np.float32))
    assert run.tokens()["keys"] == kept["keys"]


def test_ablated_heads_and_what_if_masks_equal_the_command_lines():
    folder = FIXTURES / "gpt2"
    args = ("--model", str(folder), *text_args(ENGLISH))
    ablated = cli_json("attention", *args, "--ablate", "0.1,1.0", "--mean-ablation")
    run = headmap.load(folder).run(ENGLISH, ablate="0.1,1.0", mean_ablation=True)
    want = np.array(ablated["rows"][1]["attention"]["decoder_self"]["weights"], dtype=np.float32)
    assert np.array_equal(run.weights(row=1), want)
    what_if = cli_json("attention", *args, "--mask", "none")
    run = headmap.load(folder).run(ENGLISH, mask="none")
    kept = what_if["rows"][0]["attention"]["decoder_self"]
    assert kept["what_if"] and run.tokens()["what_if"]
    assert np.array_equal(run.weights(), np.array(kept["weights"], dtype=np.float32))


def test_one_heads_vectors_are_its_queries_and_keys():
    model = headmap.load(FIXTURES / "bert")
    run = model.run(ENGLISH[0])
    vectors = run.vectors(1, 0)
    d_k = model.info["places"][0]["d_k"]
    tq = len(run.tokens()["queries"])
    assert vectors["queries"].shape == (tq, d_k) and vectors["keys"].shape == (tq, d_k)
    # softmax of QKᵀ ÷ divisor under the padding mask (nothing masked in a batch of one) is the head
    scores = vectors["queries"].astype(np.float64) @ vectors["keys"].astype(np.float64).T / vectors["divisor"]
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    assert np.abs(weights - run.weights()[1, 0]).max() < 1e-5
    with pytest.raises(headmap.HeadmapError, match="head"):
        run.vectors(1, 99)


def test_bad_input_is_refused_as_the_command_line_refuses_it(tmp_path):
    folder = FIXTURES / "gpt2"
    model = headmap.load(folder)
    cases = [
        ((lambda: model.run("")), ("attention", "--model", str(folder), "--text", "")),
        ((lambda: model.run("word " * 5000)), ("attention", "--model", str(folder), "--text", "word " * 5000)),
        ((lambda: model.run("hello", place="cross")), ("attention", "--model", str(folder), "--text", "hello", "--place", "cross")),
        ((lambda: model.run("hello", ablate="9.9")), ("attention", "--model", str(folder), "--text", "hello", "--ablate", "9.9")),
        ((lambda: headmap.load(tmp_path / "nowhere")), ("attention", "--model", str(tmp_path / "nowhere"), "--text", "hi")),
    ]
    broken = tmp_path / "broken"
    shutil.copytree(folder, broken)
    weights = (broken / "model.safetensors").read_bytes()
    (broken / "model.safetensors").write_bytes(weights[: len(weights) // 2])
    cases.append(((lambda: headmap.load(broken)), ("attention", "--model", str(broken), "--text", "hi")))
    for call, args in cases:
        with pytest.raises(headmap.HeadmapError) as refused:
            call()
        assert str(refused.value) == cli_error(*args)
    assert issubclass(headmap.HeadmapError, ValueError)
    with pytest.raises(ValueError, match="string or a list of strings"):
        model.run(42)
    with pytest.raises(headmap.HeadmapError):
        model.run(ENGLISH).weights(row=2)


def test_odd_unicode_runs_and_its_rows_sum_to_one():
    model = headmap.load(FIXTURES / "xlm-roberta")
    run = model.run("e\u0301 \u200d👩‍👩‍👧 \ufeff한국어 \U0010ffff")
    weights = run.weights()
    valid = np.array(run.tokens()["query_valid"])
    assert np.isfinite(weights).all()
    assert np.allclose(weights[:, :, valid].sum(axis=-1), 1.0, atol=1e-5)


def test_the_gil_is_released_while_the_core_computes():
    model = headmap.load(MINILM)
    long = " ".join(["the cat sat on the mat"] * 20)
    counted, stop = [0], threading.Event()

    def count():
        while not stop.is_set():
            counted[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        time.sleep(0.05)
        before = counted[0]
        started = time.perf_counter()
        for _ in range(3):
            model.run([long] * 2).weights()
        took = time.perf_counter() - started
        during = counted[0] - before
    finally:
        stop.set()
        counter.join()
    # with the GIL held for the whole call, the counting thread would not move at all
    assert during > 1000, f"the counting thread advanced {during} times in {took:.3f} s of runs"


def test_one_thread_and_two_give_the_same_bits():
    folder = MINILM  # big enough that the heads and products split over two threads
    texts = [" ".join(["a repeated sentence for the heads"] * 20), "a short one", "동물이 길을 건너지 않았다."]
    one = headmap.load(folder, threads=1).run(texts)
    two = headmap.load(folder, threads=2).run(texts)
    for b in range(3):
        assert np.array_equal(one.weights(row=b), two.weights(row=b))
    with pytest.raises(ValueError):
        headmap.load(folder, threads=0)


def test_show_and_head_view_draw_a_run_directly():
    run = headmap.load(FIXTURES / "marian").run(["I am a student.", "Hello"], targets=["Je suis étudiant.", "Bonjour"])
    figure = headmap.show(run, place="cross", row=1, html_action="return")
    assert "attention-heatmap" in figure.data
    figure = headmap.head_view(run, html_action="return")
    assert "attention-heatmap" in figure.data
    with pytest.raises(TypeError, match="carries its tokens"):
        headmap.show(run, ["a"])
