"""headmap.ray on a local Ray cluster (two CPUs, two actors): the same table as
headmap.corpus.scores whatever the dataset's order, the summary by Ray Data's aggregation equal
to the one on one machine, and with an actor killed midway no text lost and none counted twice.

Run by scripts/test-python against the wheel it installs."""

import os
import pathlib
import random
import signal
import time

import numpy as np
import pyarrow as pa
import pytest
import ray

import headmap
import headmap.corpus as corpus
import headmap.ray as headmap_ray

REPO = pathlib.Path(__file__).resolve().parents[2]
GPT2 = REPO / "tests" / "fixtures" / "hf" / "gpt2"
WORDS = "the animal didn't cross street because it was tired , . she said 동물이 그것은 ☃".split()


def sentences(n, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 10))) for _ in range(n)]


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"HEADMAP_THREADS": "1"}})
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def rows(n, seed):
    texts = sentences(n, seed) + ["", None]  # two that err
    ids = list(range(len(texts)))
    return [{"id": i, "text": t} for i, t in zip(ids, texts)], texts


def test_two_actors_give_the_tables_of_one_machine_whatever_the_order(cluster):
    items, texts = rows(600, seed=2)
    want = corpus.scores(headmap.load(GPT2), texts, progress=False)
    shuffled = items[:]
    random.Random(4).shuffle(shuffled)
    result = headmap_ray.scores(ray.data.from_items(shuffled, override_num_blocks=6), GPT2,
                                id_column="id", concurrency=2, batch_size=64)
    table = result.table
    assert table.column("id").to_pylist() == list(range(len(texts)))
    for c in ["tokens", "error"] + corpus.score_columns(want.table):
        assert table.column(c).equals(want.table.column(c)), c
    assert (result.texts, result.erred) == (want.texts, want.erred) == (602, 2)
    # the summary by Ray Data's aggregation: counts, extremes exact; the rest up to rounding
    got, expected = result.summary.to_pylist(), want.summary.to_pylist()
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert (g["score"], g["layer"], g["head"], g["count"]) == (e["score"], e["layer"], e["head"], e["count"])
        assert (g["min"], g["max"]) == (e["min"], e["max"])
        for stat in ("mean", "std", "q05", "q25", "q50", "q75", "q95"):
            assert g[stat] == pytest.approx(e[stat], rel=1e-9, abs=1e-12), (g["score"], stat)


def test_without_ids_the_text_tells_the_rows_apart(cluster):
    texts = sentences(50, seed=8)
    result = headmap_ray.scores(ray.data.from_items([{"text": t} for t in texts]), GPT2, scores=["induction"],
                                concurrency=1, batch_size=16)
    assert sorted(result.table.column("text").to_pylist()) == sorted(texts)
    assert "id" not in result.table.schema.names


def test_an_actor_killed_midway_loses_no_text_and_counts_none_twice(cluster):
    items, texts = rows(1500, seed=6)
    scored = headmap_ray.score_dataset(ray.data.from_items(items, override_num_blocks=30), GPT2,
                                       id_column="id", concurrency=2, batch_size=25)
    seen, killed, at_kill = [], None, 0
    for batch in scored.iter_batches(batch_format="pyarrow", batch_size=None):
        seen += batch.column("id").to_pylist()
        if killed is None and len(seen) >= 100:
            killed, at_kill = kill_one_scorer(), len(seen)
    assert killed is not None, "an actor was killed midway"
    assert len(seen) > at_kill, "batches came after the kill"
    assert sorted(seen) == list(range(len(texts))), "every text once, none lost, none twice"


def kill_one_scorer():
    """SIGKILL one live actor of the map, found by the process title Ray gives it: what a
    crashed worker or a lost node does to it."""
    deadline = time.time() + 30
    while time.time() < deadline:
        for proc in pathlib.Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                title = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if title.startswith("ray::MapWorker(MapBatches(HeadScorer))"):
                os.kill(int(proc.name), signal.SIGKILL)
                return int(proc.name)
        time.sleep(0.2)
    return None


def test_the_query_key_picture_on_ray_is_the_one_of_one_machine(cluster):
    items, texts = rows(800, seed=12)
    table = pa.table({"id": [r["id"] for r in items], "text": [r["text"] for r in items]})
    want = corpus.qk_picture(headmap.load(GPT2), table, 1, 3, id_column="id", max_points=700, progress=False)
    shuffled = items[:]
    random.Random(3).shuffle(shuffled)
    got = headmap_ray.qk_picture(ray.data.from_items(shuffled, override_num_blocks=5), GPT2, 1, 3,
                                 id_column="id", max_points=700, concurrency=2, batch_size=50)
    assert got["ids"] == want["ids"] and got["corpus"] == want["corpus"]
    assert got["corpus"]["erred"] == 2
    for a, b in zip(got["pictures"], want["pictures"]):
        assert np.allclose(a["coords"], b["coords"], atol=1e-5)
        assert a["explained"] == pytest.approx(b["explained"], abs=1e-6)
