"""Every head's scores over a corpus on a Ray cluster, through Ray Data: the same rows as
`headmap.corpus.scores`, computed by actors that each load the model once.

    import ray, headmap.ray
    ray.init()                                    # or RAY_ADDRESS=… for a cluster
    ds = ray.data.read_parquet("s3://…/corpus/")  # any Dataset with a text column
    result = headmap.ray.scores(ds, "models/all-MiniLM-L6-v2", id_column="id", concurrency=4)
    result.table, result.summary                  # as headmap.corpus.scores gives them

The model folder must be readable where the actors run (a shared disk, or the same path on
every node). Actors are restarted and their batches retried when a node or worker dies, so no
text is lost and none counted twice. Needs `pip install 'headmap[ray]'`.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from . import corpus


class HeadScorer:
    """The callable class `Dataset.map_batches` runs in each actor: the model is loaded once,
    in the constructor, and every batch (an Arrow table) becomes the rows of
    `headmap.corpus.scores`. Without `id_column` the text itself is kept, to tell rows apart."""

    def __init__(self, model_dir: str, column: str = "text", id_column: Optional[str] = None,
                 scores: Optional[list] = None, place: Optional[str] = None, metric: str = "mul",
                 exclude_bos: bool = False, exclude_current_token: bool = False,
                 threads: Optional[int] = 1):
        import headmap

        self.model = headmap.load(model_dir, threads=threads)
        self.column = column
        self.id_column = id_column
        self.options = dict(scores=scores, place=place, metric=metric, exclude_bos=exclude_bos,
                            exclude_current_token=exclude_current_token)

    def __call__(self, batch):
        if self.id_column is not None and self.id_column not in batch.schema.names:
            raise ValueError(f"the dataset has no id column {self.id_column!r}")
        rows = list(corpus._from_arrow_batches(batch.to_batches(), self.column, self.id_column))
        ids, texts, errors = ([r[i] for r in rows] for i in range(3))
        extra = None
        if self.id_column is None:
            names = batch.schema.names
            extra = {self.column: batch.column(self.column).to_pylist() if self.column in names
                     else [None] * batch.num_rows}
            ids = [None] * batch.num_rows
        out = corpus.score_batch(self.model, ids, texts, errors, extra=extra, **self.options)
        import pyarrow

        table = pyarrow.Table.from_batches([out])
        return table.drop_columns(["id"]) if self.id_column is None else table


def score_dataset(dataset, model_dir: str, scores: Optional[list] = None, *,
                  column: str = "text", id_column: Optional[str] = None, place: Optional[str] = None,
                  metric: str = "mul", exclude_bos: bool = False, exclude_current_token: bool = False,
                  concurrency: int = 2, batch_size: int = 256, threads: int = 1):
    """The scored Dataset, not yet run: `dataset.map_batches(HeadScorer, concurrency=…)`, each
    of `concurrency` actors holding the model and using `threads` threads (and as many CPUs
    of the cluster). Its actors restart, and their batches are retried, when a worker dies."""
    from ray.data import ActorPoolStrategy

    return dataset.map_batches(
        HeadScorer,
        fn_constructor_kwargs=dict(model_dir=str(model_dir), column=column, id_column=id_column,
                                   scores=scores, place=place, metric=metric, exclude_bos=exclude_bos,
                                   exclude_current_token=exclude_current_token, threads=threads),
        batch_format="pyarrow",
        batch_size=batch_size,
        compute=ActorPoolStrategy(size=concurrency),
        num_cpus=threads,
    )  # Ray Data's actor pools restart their actors and retry their batches by default


def summarize(scored) -> "pyarrow.Table":  # noqa: F821
    """The per-head summary of a scored Dataset by Ray Data's aggregation, laid out as
    `headmap.corpus.summarize` lays it out: count, mean, std (ddof 1), min, the quantiles and
    max of every score column, over the rows that did not err. One aggregation
    (`HeadSummary`) takes every column at once."""
    import json

    names = [n for n in scored.schema().names if n.count(".") == 2 and n.rsplit(".", 2)[1].isdigit()]
    result = json.loads(scored.aggregate(_head_summary(names))["headmap_summary"])
    stats = ("count", "mean", "std", "min", *(corpus._q(q) for q in corpus.QUANTILES), "max")
    rows = {k: [] for k in ("score", "layer", "head", *stats)}
    for name, values in zip(names, result["columns"]):
        score, layer, head = name.rsplit(".", 2)
        rows["score"].append(score)
        rows["layer"].append(int(layer))
        rows["head"].append(int(head))
        for stat, value in zip(stats, values):
            rows[stat].append(int(value) if stat == "count" else (np.nan if value is None else float(value)))
    return corpus._pyarrow().table(rows).replace_schema_metadata(
        {"texts": str(result["texts"]), "erred": str(result["erred"])})


def _head_summary(names):
    """A Ray Data aggregation of every score column at once. Ray's own (Count, Mean, Std, Min,
    Max and Quantile per column: ten per head, 7,200 for MiniLM) cost a fixed 12–13 s here
    whatever the corpus; this one reads each block as one array. Its accumulator keeps the
    scores themselves (float32, as scored), as Ray's exact Quantile keeps its values, so the
    quantiles, least and largest are those of `headmap.corpus.summarize` exactly; the mean and
    the standard deviation, summed in another order, agree to rounding."""
    from ray.data.aggregate import AggregateFnV2
    from ray.data.block import BlockAccessor

    class HeadSummary(AggregateFnV2):
        def __init__(self):
            # an empty accumulator is None (ignore_nulls), and every block gives one
            super().__init__("headmap_summary", zero_factory=lambda: None, on=None, ignore_nulls=True)

        def aggregate_block(self, block):
            table = BlockAccessor.for_block(block).to_arrow()
            values = np.empty((table.num_rows, len(names)), dtype=np.float32)
            valid = np.empty((table.num_rows, len(names)), dtype=bool)
            for j, name in enumerate(names):
                column = table.column(name)
                valid[:, j] = column.is_valid().to_numpy(zero_copy_only=False)
                values[:, j] = column.fill_null(0.0).to_numpy(zero_copy_only=False)
            erred = table.num_rows - table.column("error").null_count
            return {"texts": table.num_rows, "erred": erred, "values": values, "valid": valid}

        def combine(self, current, new):
            return {"texts": current["texts"] + new["texts"], "erred": current["erred"] + new["erred"],
                    "values": np.concatenate([current["values"], new["values"]]),
                    "valid": np.concatenate([current["valid"], new["valid"]])}

        def finalize(self, acc):
            import json

            columns = []
            for j in range(len(names)):
                v = acc["values"][acc["valid"][:, j], j].astype(np.float64)
                if v.size == 0:
                    columns.append([0] + [None] * (4 + len(corpus.QUANTILES)))
                    continue
                std = float(v.std(ddof=1)) if v.size > 1 else None
                columns.append([int(v.size), float(v.mean()), std, float(v.min()),
                                *(float(x) for x in np.quantile(v, corpus.QUANTILES)), float(v.max())])
            return json.dumps({"texts": acc["texts"], "erred": acc["erred"], "columns": columns})

    return HeadSummary()


def scores(dataset, model_dir: str, scores: Optional[list] = None, **options) -> corpus.CorpusScores:
    """Every head's scores for each row of a Ray Dataset (column `column`), as
    `headmap.corpus.scores` gives them for a file: the table (sorted by `id_column` when given)
    and the per-head summary by Ray Data's aggregation. Options as `score_dataset`'s."""
    import pyarrow
    import ray

    scored = score_dataset(dataset, model_dir, scores, **options).materialize()
    summary = summarize(scored)
    table = pyarrow.concat_tables(ray.get(scored.to_arrow_refs()))
    if options.get("id_column") is not None:
        table = table.sort_by("id")
    meta = summary.schema.metadata
    return corpus.CorpusScores(table, summary, int(meta[b"texts"]), int(meta[b"erred"]))


class QkPart:
    """The callable class `Dataset.map_batches` runs to read a corpus's query–key picture:
    each batch becomes one row holding its part (the moments of every head of `layer` and its
    candidates for the sample), which `qk_picture` merges into the whole."""

    def __init__(self, model_dir: str, layer: int, max_points: int, seed: int, column: str = "text",
                 id_column: Optional[str] = None, place: Optional[str] = None, threads: Optional[int] = 1):
        import headmap

        self.model = headmap.load(model_dir, threads=threads)
        self.layer, self.max_points, self.seed = layer, max_points, seed
        self.column, self.id_column, self.place = column, id_column, place

    def __call__(self, batch):
        import pickle

        import pyarrow

        rows = list(corpus._from_arrow_batches(batch.to_batches(), self.column, self.id_column))
        ids, texts, errors = ([r[i] for r in rows] for i in range(3))
        if self.id_column is None:  # the text is the id: the sample is the same in any order
            ids = [t if t is not None else f"row {i}" for i, t in enumerate(texts)]
        part = corpus.QkAccumulator(self.layer, self.max_points, self.seed)
        part.add(self.model, ids, texts, errors, place=self.place)
        return pyarrow.table({"part": [pickle.dumps(part)]})


def qk_picture(dataset, model_dir: str, layer: int, head: int = 0, *, column: str = "text",
               id_column: Optional[str] = None, place: Optional[str] = None, max_points: int = 8000,
               seed: int = 0, concurrency: int = 2, batch_size: int = 256, threads: int = 1,
               out=None) -> dict:
    """`headmap.corpus.qk_picture` over a Ray Dataset: each actor adds up its batches' moments
    and sample candidates, the parts are merged here, and the sample is drawn with the model
    loaded once more in this process. With `id_column` the picture is the one
    `headmap.corpus.qk_picture` draws of the same rows (without it, the texts are the ids)."""
    import pickle

    from ray.data import ActorPoolStrategy

    import headmap

    model = headmap.load(model_dir, threads=threads)  # here, to refuse a bad layer or head at once
    corpus.check_head(model, layer, head, place)
    parts = dataset.map_batches(
        QkPart,
        fn_constructor_kwargs=dict(model_dir=str(model_dir), layer=layer, max_points=max_points, seed=seed,
                                   column=column, id_column=id_column, place=place, threads=threads),
        batch_format="pyarrow",
        batch_size=batch_size,
        compute=ActorPoolStrategy(size=concurrency),
        num_cpus=threads,
    )
    whole = corpus.QkAccumulator(layer, max_points, seed)
    for batch in parts.iter_batches(batch_format="pyarrow", batch_size=None):
        for blob in batch.column("part").to_pylist():
            whole.merge(pickle.loads(blob))
    doc = whole.picture(model, head, place=place)
    if out is not None:
        corpus.write_picture(doc, out)
    return doc
