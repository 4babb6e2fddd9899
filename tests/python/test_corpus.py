"""headmap.corpus on one machine: a corpus's table equals the texts' single runs bit for bit,
every source (a list, a generator, Parquet, JSONL, a text file, an Arrow table) gives the same
rows, every text is accounted for (a row with its error, never dropped), the source is read in
batches, and the summary is the table's.

Run by scripts/test-python against the wheel it installs."""

import json
import pathlib
import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import headmap
import headmap.corpus as corpus

REPO = pathlib.Path(__file__).resolve().parents[2]
GPT2 = REPO / "tests" / "fixtures" / "hf" / "gpt2"  # a tiny GPT-2 fixture: quick to run 2,000 times
MINILM = REPO / "models" / "all-MiniLM-L6-v2"  # the default model, fetched by scripts/setup
TRANSLATOR = REPO / "www" / "models" / "headmap-tiny-ko-en"

WORDS = ("the animal didn't cross street because it was too tired wide she said that he "
         "went home , . ! ? and then again the cat sat on mat 동물이 길을 그것은 피곤했다 "
         "1 2 3 4 5 6 7 8 9 0 ☃ é").split()


def sentences(n: int, seed: int = 7, longest: int = 12) -> list:
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, longest))) for _ in range(n)]


def single(model, text, names=None):
    return model.run(text).heads(scores=names)


def test_two_thousand_texts_equal_two_thousand_single_runs_bit_for_bit():
    model = headmap.load(GPT2)
    texts = sentences(2000)
    result = corpus.scores(model, texts, batch_size=300, progress=False)
    table = result.table
    assert table.num_rows == result.texts == 2000 and result.erred == 0
    assert table.column("id").to_pylist() == list(range(2000))
    assert table.column("error").null_count == 2000
    names = sorted({n.rsplit(".", 2)[0] for n in corpus.score_columns(table)})
    one = single(model, texts[0])
    assert names == sorted(one), "the table has every score a single run has"
    matrices = {name: corpus.matrix(table, name) for name in names}
    tokens = table.column("tokens").to_pylist()
    for i, text in enumerate(texts):
        run = model.run(text)
        expected = run.heads()
        for name in names:
            assert np.array_equal(matrices[name][i], expected[name], equal_nan=True), (i, name)
        assert tokens[i] == sum(run.tokens()["query_valid"])


def test_the_default_model_and_the_translator_too():
    # each MiniLM text and its words backwards: texts of one length, which run together
    minilm = [t for text in sentences(8, seed=1, longest=30) for t in (text, " ".join(text.split()[::-1]))]
    for folder, texts in ((MINILM, minilm), (TRANSLATOR, ["동물이 길을 건너지 않았다.", "그것은 너무 피곤했다."] * 3)):
        model = headmap.load(folder)
        result = corpus.scores(model, texts, scores=["previous_token", "first_token"], progress=False)
        assert [n.rsplit(".", 2)[0] for n in corpus.score_columns(result.table)][0] == "previous_token"
        place = model.info["places"][0]
        assert len(corpus.score_columns(result.table)) == 2 * place["layers"] * place["heads"]
        for i, text in enumerate(texts):
            expected = single(model, text, ["previous_token", "first_token"])
            for name in ("previous_token", "first_token"):
                assert np.array_equal(corpus.matrix(result.table, name)[i], expected[name]), (folder.name, i)


def test_every_source_gives_the_same_rows(tmp_path):
    model = headmap.load(GPT2)
    texts = sentences(97, seed=3)
    want = corpus.scores(model, texts, batch_size=10, progress=False).table
    columns = corpus.score_columns(want)

    def same(result, ids=None):
        table = result.table
        assert table.num_rows == len(texts)
        assert table.column("id").to_pylist() == (ids if ids is not None else list(range(len(texts))))
        for c in columns + ["tokens", "error"]:
            assert table.column(c).equals(want.column(c)), c

    # a generator, read without knowing its length
    same(corpus.scores(model, (t for t in texts), batch_size=8, progress=False))
    # Parquet in several row groups, with its own ids
    ids = [f"doc-{i}" for i in range(len(texts))]
    pq.write_table(pa.table({"id": ids, "body": texts, "other": list(range(len(texts)))}), tmp_path / "c.parquet", row_group_size=13)
    same(corpus.scores(model, tmp_path / "c.parquet", column="body", id_column="id", batch_size=16, progress=False), ids)
    # JSONL: objects with the field
    (tmp_path / "c.jsonl").write_text("".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts), encoding="utf-8")
    same(corpus.scores(model, str(tmp_path / "c.jsonl"), batch_size=7, progress=False))
    # a text file, a text per line
    (tmp_path / "c.txt").write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    same(corpus.scores(model, tmp_path / "c.txt", progress=False))
    # an Arrow table in memory
    same(corpus.scores(model, pa.table({"text": texts}), batch_size=50, progress=False))


def test_every_text_is_accounted_for_with_its_error(tmp_path):
    model = headmap.load(GPT2)
    too_long = " ".join(["cat"] * (model.info["max_tokens"] + 5))
    source = ["The cat sat.", "", None, 42, too_long, "é\u0301 \u200b ☃ 🐈‍⬛", "Again."]
    result = corpus.scores(model, source, batch_size=3, progress=False)
    table = result.table
    assert table.num_rows == len(source) == result.texts
    errors = table.column("error").to_pylist()
    assert errors[0] is None and errors[5] is None and errors[6] is None
    assert "empty" in errors[1]
    assert errors[2] == "not a string: nothing (null)"
    assert errors[3] == "not a string: a int"
    assert str(model.info["max_tokens"]) in errors[4], errors[4]
    assert result.erred == 4 == int(result.summary.schema.metadata[b"erred"])
    first = corpus.score_columns(table)[0]
    assert table.column(first).is_null().to_pylist() == [e is not None for e in errors]
    assert table.column("tokens").to_pylist()[1:5] == [0, 0, 0, 0]
    assert not np.isnan(corpus.matrix(table, "first_token")[[0, 5, 6]]).any()
    # the summary counts only the texts that did not err
    assert set(result.summary.column("count").to_pylist()) == {3}

    # a JSONL line without the field, one that is no JSON, a bare string, a number
    lines = [json.dumps({"text": "The cat."}), json.dumps({"title": "no text"}), "{broken", json.dumps("A bare string."), "3"]
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    errors = corpus.scores(model, tmp_path / "bad.jsonl", progress=False).table.column("error").to_pylist()
    assert errors[0] is None and errors[3] is None
    assert errors[1] == "line 2 has no field 'text'"
    assert errors[2] == "line 3 is not JSON"
    assert errors[4] == "not a string: a int"

    # a Parquet file without the column: every row says so, none is dropped
    pq.write_table(pa.table({"body": ["a", "b", "c"]}), tmp_path / "other.parquet")
    table = corpus.scores(model, tmp_path / "other.parquet", progress=False).table
    assert table.column("error").to_pylist() == ["no column 'text' (the columns: body)"] * 3
    # a Parquet column of numbers: every row is "not a string"
    pq.write_table(pa.table({"text": [1, 2]}), tmp_path / "numbers.parquet")
    assert corpus.scores(model, tmp_path / "numbers.parquet", progress=False).table.column("error").to_pylist() == ["not a string: a int"] * 2


def test_a_whole_batch_of_errors_and_an_empty_corpus_keep_their_columns():
    model = headmap.load(GPT2)
    full = corpus.scores(model, ["The cat."], progress=False).table
    for source in ([], ["", None]):
        table = corpus.scores(model, source, progress=False).table
        assert table.schema.names == full.schema.names
        assert table.num_rows == len(source)


def test_bad_arguments_are_refused_before_any_work(tmp_path):
    model = headmap.load(GPT2)
    with pytest.raises(FileNotFoundError, match="no corpus file"):
        corpus.scores(model, tmp_path / "missing.parquet")
    with pytest.raises(TypeError, match="a corpus is texts"):
        corpus.scores(model, 12)
    with pytest.raises(ValueError, match="batch_size"):
        corpus.scores(model, ["a"], batch_size=0)
    with pytest.raises(headmap.HeadmapError, match="score"):
        corpus.scores(model, ["a"], scores=["prev"])
    pq.write_table(pa.table({"text": ["a"]}), tmp_path / "c.parquet")
    with pytest.raises(ValueError, match="no id column 'id'"):
        corpus.scores(model, tmp_path / "c.parquet", id_column="id")


def test_the_source_is_read_a_batch_at_a_time():
    model = headmap.load(GPT2)

    class Counting:
        """The model, counting the texts it has scored."""

        scored = 0
        info = model.info

        def scores(self, texts, **options):
            Counting.scored += len(texts)
            return model.scores(texts, **options)

    lead = []

    def texts():
        for i, text in enumerate(sentences(500, seed=5)):
            lead.append(i - Counting.scored)  # texts read but not yet scored
            yield text

    corpus.scores(Counting(), texts(), batch_size=40, progress=False)
    assert Counting.scored == 500
    assert max(lead) < 40, "no more than a batch is held before it is scored"


def test_the_summary_is_the_tables():
    model = headmap.load(GPT2)
    result = corpus.scores(model, sentences(150, seed=9) + [""], progress=False)
    summary = result.summary
    assert summary.schema.metadata == {b"texts": b"151", b"erred": b"1"}
    info = model.info["places"][0]
    assert summary.num_rows == len(corpus.score_columns(result.table)) == 10 * info["layers"] * info["heads"]
    for row in summary.to_pylist()[::7]:
        values = corpus.matrix(result.table, row["score"])[:150, row["layer"], row["head"]].astype(np.float64)
        assert row["count"] == 150
        assert row["mean"] == pytest.approx(values.mean(), rel=1e-12, abs=1e-12)
        assert row["std"] == pytest.approx(values.std(ddof=1), rel=1e-9, abs=1e-12)
        assert (row["min"], row["max"]) == (values.min(), values.max())
        assert row["q50"] == pytest.approx(np.median(values), rel=1e-12, abs=1e-12)
        assert row["q05"] <= row["q25"] <= row["q50"] <= row["q75"] <= row["q95"]


def test_the_native_scores_run_each_text_alone_on_any_number_of_threads():
    texts = sentences(40, seed=11)
    one = headmap.load(GPT2, threads=1).scores(texts)
    two = headmap.load(GPT2, threads=2).scores(texts)
    assert one["scores"] == two["scores"]
    assert np.array_equal(one["values"], two["values"])
    assert one["values"].shape[:2] == (40, len(one["scores"]))
    assert one["errors"] == [None] * 40


# -- the query–key picture of a corpus --------------------------------------------------------------


def one_shot(model, texts, layer, head):
    """The joint embedding's axes over every token of `texts` at once, in NumPy: the shift,
    the root-mean-square scale, then the principal components of the stacked points."""
    qs, ks = [], []
    for text in texts:
        v = model.run(text).vectors(layer, head)
        qs.append(v["queries"])
        ks.append(v["keys"])
    q, k = np.vstack(qs).astype(np.float64), np.vstack(ks).astype(np.float64)
    shift = q.mean(0) - k.mean(0)
    c = (((k + shift) ** 2).sum(1).mean() / (q**2).sum(1).mean()) ** 0.25
    points = np.vstack([q * c, (k + shift) / c])
    mean = points.mean(0)
    values, vectors = np.linalg.eigh(np.cov(points, rowvar=False))
    order = np.argsort(values)[::-1][:2]
    return {"shift": shift, "scale": c, "mean": mean, "axes": vectors[:, order].T,
            "explained": values[order] / values.sum(), "tokens": len(q)}


def drawn_vectors(model, doc, layer, head):
    """The drawn sentences' joint points, queries then keys, as the picture orders them."""
    qs = [model.run(t).vectors(layer, head)["queries"] for t in doc["lines"]]
    ks = [model.run(t).vectors(layer, head)["keys"] for t in doc["lines"]]
    return np.vstack(qs).astype(np.float64), np.vstack(ks).astype(np.float64)


def test_a_corpus_picture_of_twenty_thousand_tokens_equals_the_one_shot_computation(tmp_path):
    model = headmap.load(GPT2)
    texts = sentences(2600, seed=21)
    layer, head = 1, 2
    doc = corpus.qk_picture(model, texts, layer, head, max_points=1500, batch_size=200, progress=False,
                            out=tmp_path / "picture.json")
    assert json.loads((tmp_path / "picture.json").read_text(encoding="utf-8")) == json.loads(json.dumps(doc))
    want = one_shot(model, texts, layer, head)
    assert want["tokens"] >= 20_000, want["tokens"]
    assert doc["format"] == "headmap.qk" and doc["version"] == 1
    assert doc["corpus"] == {"texts": 2600, "erred": 0, "queries": want["tokens"], "keys": want["tokens"]}
    assert (doc["layer"], doc["head"], doc["heads"], doc["place"]) == (layer, head, 4, "decoder_self")
    picture = doc["pictures"][head]
    assert picture["scale"] == pytest.approx(want["scale"], rel=1e-6)
    assert picture["explained"] == pytest.approx(want["explained"], abs=1e-4)
    # the drawn points on the corpus's axes, up to each axis's sign
    q, k = drawn_vectors(model, doc, layer, head)
    points = np.vstack([q * want["scale"], (k + want["shift"]) / want["scale"]])
    expected = (points - want["mean"]) @ want["axes"].T
    got = np.array(picture["coords"]).reshape(-1, 2)
    assert got.shape == expected.shape
    assert picture["queries"] == len(q) and picture["keys"] == len(k)
    assert 500 <= got.shape[0] <= 1500, got.shape
    for axis in range(2):
        sign = np.sign(got[:, axis] @ expected[:, axis])
        assert np.abs(got[:, axis] - sign * expected[:, axis]).max() < 1e-4, axis
    # every sentence drawn is named and labelled as the page labels it
    assert len(doc["lines"]) == len(doc["sentences"]) == len(doc["ids"])
    first = doc["sentences"][0]
    assert [t["label"] for t in first["queries"]] == model.run(doc["lines"][0]).tokens()["queries"]
    assert set(first["queries"][0]) == {"label", "kind", "text"}


def test_the_picture_is_the_same_in_any_order_and_batching():
    model = headmap.load(GPT2)
    texts = sentences(400, seed=5)
    table = pa.table({"id": [f"s{i}" for i in range(400)], "text": texts})
    a = corpus.qk_picture(model, table, 0, id_column="id", max_points=600, batch_size=64, progress=False)
    shuffled = table.take(np.random.default_rng(1).permutation(400))
    b = corpus.qk_picture(model, shuffled, 0, id_column="id", max_points=600, batch_size=37, progress=False)
    assert a["ids"] == b["ids"] and a["lines"] == b["lines"]
    for pa_, pb in zip(a["pictures"], b["pictures"]):
        assert np.allclose(pa_["coords"], pb["coords"], atol=1e-5)
    # another seed draws other sentences
    c = corpus.qk_picture(model, table, 0, id_column="id", max_points=600, seed=1, progress=False)
    assert c["ids"] != a["ids"]


def test_the_picture_counts_texts_that_err_and_refuses_what_it_cannot_draw(tmp_path):
    model = headmap.load(GPT2)
    doc = corpus.qk_picture(model, ["The cat sat.", "", None, "A dog ran."], 0, progress=False)
    assert doc["corpus"]["texts"] == 4 and doc["corpus"]["erred"] == 2
    assert sorted(doc["lines"]) == ["A dog ran.", "The cat sat."]
    with pytest.raises(ValueError, match="no layer 9"):
        corpus.qk_picture(model, ["a"], 9)
    with pytest.raises(ValueError, match="no head 4"):
        corpus.qk_picture(model, ["a"], 0, head=4)
    with pytest.raises(ValueError, match="could be drawn"):
        corpus.qk_picture(model, ["", None], 0, progress=False)
    with pytest.raises(ValueError, match="max_points"):
        corpus.qk_picture(model, ["The cat sat on the mat."], 0, max_points=3, progress=False)
    with pytest.raises(ValueError, match="no place"):
        corpus.qk_picture(model, ["a"], 0, place="cross")


def test_the_native_moments_are_the_same_on_any_number_of_threads():
    texts = sentences(70, seed=13)
    one = headmap.load(GPT2, threads=1).qk_moments(texts, 1)
    two = headmap.load(GPT2, threads=2).qk_moments(texts, 1)
    for key in ("count", "sum", "outer", "tokens"):
        assert np.array_equal(one[key], two[key]), key
    assert one["sum"].shape == (4, 2, 8) and one["outer"].shape == (4, 2, 8, 8)


def test_the_committed_picture_file_is_what_qk_picture_writes_today():
    # the front end's tests open tests/fixtures/qk/picture-tiny-ko-en.json: it must not go stale
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_qk_picture", REPO / "scripts" / "dev" / "make_qk_picture.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    committed = json.loads(script.OUT.read_text(encoding="utf-8"))
    fresh = json.loads(json.dumps(script.picture()))
    assert committed["corpus"]["queries"] >= 20_000
    for key in ("format", "version", "model_type", "place", "layer", "head", "heads", "corpus", "lines", "ids", "sentences"):
        assert committed[key] == fresh[key], f"{key}: run scripts/dev/make_qk_picture.py"
    for a, b in zip(committed["pictures"], fresh["pictures"]):
        assert np.allclose(a["coords"], b["coords"], atol=1e-5), "run scripts/dev/make_qk_picture.py"
        assert a["explained"] == pytest.approx(b["explained"], abs=1e-6)


def test_a_line_that_is_not_utf8_is_its_own_error(tmp_path):
    model = headmap.load(GPT2)
    (tmp_path / "c.txt").write_bytes(b"The cat sat.\n\xff\xfe broken\nA dog ran.\n")
    (tmp_path / "c.jsonl").write_bytes(b'{"text": "The cat sat."}\n{"text": "\xff"}\n')
    assert corpus.scores(model, tmp_path / "c.txt", progress=False).table.column("error").to_pylist() == [None, "line 2 is not UTF-8 text", None]
    assert corpus.scores(model, tmp_path / "c.jsonl", progress=False).table.column("error").to_pylist() == [None, "line 2 is not UTF-8 text"]


def test_a_line_too_long_to_read_is_its_own_error_as_on_the_command_line(tmp_path):
    # read up to 16 MB, the rest passed over unread: a 200 MB line took 712 MB before
    model = headmap.load(GPT2)
    long = b"a" * (corpus.LINE_BYTES + 1)
    (tmp_path / "c.txt").write_bytes(b"The cat sat.\n" + long + b"\nA dog ran.\n" + long)
    (tmp_path / "c.jsonl").write_bytes(b'{"text": "The cat sat."}\n{"text": "' + long + b'"}\n{"text": "A dog ran."}\n')
    said = lambda n: f"line {n} is longer than 16 MB"
    for name, want in (("c.txt", [None, said(2), None, said(4)]), ("c.jsonl", [None, said(2), None])):
        table = corpus.scores(model, tmp_path / name, progress=False).table
        assert table.column("error").to_pylist() == want, name
        cli("heads", "--model", str(GPT2), "--input", str(tmp_path / name), "--out", str(tmp_path / "s.parquet"))
        assert pq.read_table(tmp_path / "s.parquet").column("error").to_pylist() == want, name
    # a line of exactly 16 MB and its newline is read
    (tmp_path / "d.txt").write_bytes(b"x " * (corpus.LINE_BYTES // 2) + b"\n")
    error = corpus.scores(model, tmp_path / "d.txt", progress=False).table.column("error").to_pylist()[0]
    assert error is not None and "characters, more than the maximum" in error, error


def cli(*args):
    import os
    import subprocess

    binary = os.environ.get("HEADMAP_CLI")
    if not binary or not pathlib.Path(binary).is_file():
        pytest.fail(f"HEADMAP_CLI={binary!r} must name the headmap binary (scripts/test-python builds it)")
    done = subprocess.run([binary, *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_command_line_writes_the_table_python_makes(tmp_path):
    # headmap heads --input: the same rows, bit for bit, from Parquet, JSONL and text files
    model = headmap.load(GPT2)
    texts = sentences(300, seed=17) + ["", "x " * 80]
    pq.write_table(pa.table({"body": texts + [None]}), tmp_path / "c.parquet", row_group_size=70)
    (tmp_path / "c.jsonl").write_bytes(b"".join(json.dumps({"body": t}).encode() + b"\n" for t in texts) + b'{"other": 1}\n{broken\n7\n\xff\n')
    (tmp_path / "c.txt").write_bytes("".join(t + "\n" for t in texts).encode() + b"\xfe\n")
    for name, options in (("c.parquet", ["--column", "body"]), ("c.jsonl", ["--column", "body"]), ("c.txt", [])):
        want = corpus.scores(model, tmp_path / name, column="body", progress=False).table
        cli("heads", "--model", str(GPT2), "--input", str(tmp_path / name), *options, "--out", str(tmp_path / "s.parquet"))
        got = pq.read_table(tmp_path / "s.parquet")
        assert got.schema.names == want.schema.names, name
        assert got.num_rows == want.num_rows
        for c in want.schema.names:
            assert got.column(c).to_pylist() == want.column(c).to_pylist(), (name, c)
    errors = got.column("error").to_pylist()
    assert errors[-1] == "line 303 is not UTF-8 text" and "empty" in errors[-3]
    # CSV and JSON lines carry the same numbers
    lines = cli("heads", "--model", str(GPT2), "--input", str(tmp_path / "c.jsonl"), "--column", "body", "--score", "induction").splitlines()
    assert len(lines) == len(texts) + 4
    rows = [json.loads(line) for line in lines]
    want = corpus.scores(model, tmp_path / "c.jsonl", ["induction"], column="body", progress=False).table
    assert [r["error"] for r in rows] == want.column("error").to_pylist()
    column = want.column("induction.1.2").to_pylist()
    assert [None if r["induction.1.2"] is None else np.float32(r["induction.1.2"]) for r in rows] == [None if v is None else np.float32(v) for v in column]
    csv = cli("heads", "--model", str(GPT2), "--input", str(tmp_path / "c.jsonl"), "--column", "body", "--score", "induction", "--format", "csv").splitlines()
    assert csv[0] == "id,tokens,error," + ",".join(f"induction.{l}.{h}" for l in range(2) for h in range(4))
    assert all(line.count(",") == 10 for line in csv if '"' not in line)


def test_ids_of_mixed_types_and_a_broken_parquet_file(tmp_path):
    model = headmap.load(GPT2)
    lines = [{"id": 3, "text": "The cat."}, {"id": "a", "text": "A dog."}, {"text": "No id."}]
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(l) + "\n" for l in lines), encoding="utf-8")
    table = corpus.scores(model, tmp_path / "c.jsonl", id_column="id", progress=False).table
    assert table.column("id").to_pylist() == ["3", "a", "2"]
    assert table.column("error").to_pylist() == [None, None, None]
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(ValueError, match="broken.parquet is not a Parquet file headmap can read"):
        corpus.scores(model, tmp_path / "broken.parquet", progress=False)
