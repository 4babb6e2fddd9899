"""Every head's scores over a corpus, on one machine: a list of texts, or a Parquet, JSONL or
text file streamed in batches, through the native core (each text run alone, the texts spread
over its threads), into an Arrow table of one row per text and a per-head summary.

    import headmap, headmap.corpus
    model = headmap.load("models/all-MiniLM-L6-v2")
    result = headmap.corpus.scores(model, "corpus.parquet", column="text")
    result.table            # id, tokens, error, then "induction.2.5" … one column per score and head
    result.summary          # score, layer, head, count, mean, std, min, q05 … max
    headmap.corpus.matrix(result.table, "induction")   # float32 (texts, layers, heads), NaN where erred

No text is dropped: one the model refuses (empty, past its positions, not a string, a JSONL
line without the column) keeps its row, its scores null and its `error` saying why; the
summary counts such rows.

Needs pyarrow (`pip install headmap[corpus]`); tqdm, when present, draws the progress bar.
"""

from __future__ import annotations

import json
import os
from typing import Iterable, Iterator, NamedTuple, Optional

import numpy as np

#: The quantiles the summary gives, named q05 … q95.
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


class CorpusScores(NamedTuple):
    """What `scores` returns: the table (one row per text), the per-head summary, and how
    many texts there were and how many of them erred."""

    table: "pyarrow.Table"  # noqa: F821
    summary: "pyarrow.Table"  # noqa: F821
    texts: int
    erred: int


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError as e:
        raise ImportError("headmap.corpus needs pyarrow: pip install 'headmap[corpus]'") from e
    return pyarrow


def column_name(score: str, layer: int, head: int) -> str:
    """The table's column of one head's score: `"induction.2.5"` (layer 2, head 5, from 0)."""
    return f"{score}.{layer}.{head}"


# -- sources: (id, text or None, error or None), one per row, streamed --------------------------


def _describe(value) -> str:
    return "nothing (null)" if value is None else f"a {type(value).__name__}"


def _item(id_, value):
    if isinstance(value, str):
        return (id_, value, None)
    return (id_, None, f"not a string: {_describe(value)}")


def _from_arrow_batches(batches, column, id_column, start=0):
    row = start
    for batch in batches:
        names = batch.schema.names
        texts = batch.column(names.index(column)).to_pylist() if column in names else None
        ids = batch.column(names.index(id_column)).to_pylist() if id_column else None
        for i in range(batch.num_rows):
            id_ = ids[i] if ids is not None else row
            if texts is None:
                yield (id_, None, f"no column {column!r} (the columns: {', '.join(names)})")
            else:
                yield _item(id_, texts[i])
            row += 1


def _from_jsonl(path, column, id_column):
    with open(path, encoding="utf-8") as f:
        for line_number, line in enumerate(f):
            id_ = line_number
            try:
                value = json.loads(line)
            except json.JSONDecodeError as e:
                yield (id_, None, f"line {line_number + 1} is not JSON: {e.msg}")
                continue
            if isinstance(value, dict):
                if id_column is not None and id_column in value:
                    id_ = value[id_column]
                if column not in value:
                    yield (id_, None, f"line {line_number + 1} has no field {column!r}")
                    continue
                value = value[column]
            yield _item(id_, value)


def _from_text(path):
    with open(path, encoding="utf-8") as f:
        for line_number, line in enumerate(f):
            yield (line_number, line.rstrip("\r\n"), None)


def _source(source, column: str, id_column: Optional[str], batch_size: int):
    """(rows, total): the rows of `source` one at a time, and how many there are when that is
    known without reading them all."""
    pa = _pyarrow()
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no corpus file {path}")
        suffix = os.path.splitext(path)[1].lower()
        if suffix in (".parquet", ".pq"):
            file = pa.parquet.ParquetFile(path)
            names = file.schema_arrow.names
            if id_column is not None and id_column not in names:
                raise ValueError(f"{path} has no id column {id_column!r} (the columns: {', '.join(names)})")
            wanted = [c for c in dict.fromkeys([column, id_column]) if c is not None and c in names]
            batches = file.iter_batches(batch_size=batch_size, columns=wanted or names[:1])
            return _from_arrow_batches(batches, column, id_column), file.metadata.num_rows
        if suffix in (".jsonl", ".ndjson", ".json"):
            return _from_jsonl(path, column, id_column), None
        return _from_text(path), None
    if isinstance(source, (pa.Table, pa.RecordBatch)):
        if id_column is not None and id_column not in source.schema.names:
            raise ValueError(f"the table has no id column {id_column!r}")
        batches = source.to_batches(max_chunksize=batch_size) if isinstance(source, pa.Table) else [source]
        return _from_arrow_batches(batches, column, id_column), source.num_rows
    if isinstance(source, Iterable):
        total = len(source) if hasattr(source, "__len__") else None
        return (_item(i, value) for i, value in enumerate(source)), total
    raise TypeError(f"a corpus is texts, a file's path or an Arrow table, not {_describe(source)}")


def _chunks(rows: Iterator, size: int):
    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


# -- scoring -----------------------------------------------------------------------------------


def score_batch(model, ids, texts, errors, *, scores=None, place=None, metric="mul",
                exclude_bos=False, exclude_current_token=False, extra=None):
    """One batch of rows as an Arrow record batch: `ids`, `texts` (None where `errors` says
    why already) through `model.scores`. What `scores` and the Ray path both call. `extra`:
    more columns to carry along (name → values)."""
    pa = _pyarrow()
    good = [i for i, error in enumerate(errors) if error is None]
    out = model.scores([texts[i] for i in good], scores=scores, place=place, metric=metric,
                       exclude_bos=exclude_bos, exclude_current_token=exclude_current_token)
    n = len(ids)
    names = out["scores"]
    values = np.full((n,) + out["values"].shape[1:], np.nan, dtype=np.float32)
    values[good] = out["values"]
    tokens = np.zeros(n, dtype=np.int64)
    tokens[good] = out["tokens"]
    error = list(errors)
    for k, i in enumerate(good):
        error[i] = out["errors"][k]
    erred = np.array([e is not None for e in error], dtype=bool)
    columns = {"id": pa.array(ids), "tokens": pa.array(tokens), "error": pa.array(error, type=pa.string())}
    for name, vals in (extra or {}).items():
        columns[name] = pa.array(vals)
    for s, score in enumerate(names):
        for layer in range(values.shape[2]):
            for head in range(values.shape[3]):
                columns[column_name(score, layer, head)] = pa.array(values[:, s, layer, head], mask=erred)
    return pa.RecordBatch.from_pydict(columns)


def scores(model, source, scores: Optional[list] = None, *, place: Optional[str] = None,
           column: str = "text", id_column: Optional[str] = None, batch_size: int = 256,
           metric: str = "mul", exclude_bos: bool = False, exclude_current_token: bool = False,
           progress: bool = True) -> CorpusScores:
    """Every head's scores (all the place takes, or those named) for each text of `source`:
    a list or any iterable of texts, an Arrow table, or the path of a Parquet file (column
    `column`), a JSONL file (objects with `column`, or bare strings) or a text file (a text per
    line). Read `batch_size` rows at a time; each text is run alone, so its row equals
    `model.run(text).heads(...)` bit for bit. `id_column` names the source's own ids (default:
    the row's position)."""
    pa = _pyarrow()
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    rows, total = _source(source, column, id_column, batch_size)
    bar = _progress(total) if progress else None
    batches = []
    options = dict(scores=scores, place=place, metric=metric, exclude_bos=exclude_bos,
                   exclude_current_token=exclude_current_token)
    for chunk in _chunks(rows, batch_size):
        ids, texts, errors = (list(c) for c in zip(*chunk))
        batches.append(score_batch(model, ids, texts, errors, **options))
        if bar is not None:
            bar.update(len(chunk))
    if bar is not None:
        bar.close()
    if not batches:  # an empty corpus: the columns still say what would be there
        batches.append(score_batch(model, [], [], [], **options))
    table = pa.Table.from_batches(batches)
    erred = table.num_rows - table.column("error").null_count
    return CorpusScores(table, summarize(table), table.num_rows, erred)


def _progress(total):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="text", desc="headmap")


def score_columns(table) -> list:
    """The table's score columns, `score.layer.head`, in order."""
    return [name for name in table.schema.names if name.count(".") == 2 and name.rsplit(".", 2)[1].isdigit()]


def matrix(table, score: str) -> np.ndarray:
    """One score of every text and head: float32 (texts, layers, heads), NaN where a text erred."""
    heads = [tuple(int(x) for x in name.rsplit(".", 2)[1:]) for name in score_columns(table)
             if name.rsplit(".", 2)[0] == score]
    if not heads:
        raise KeyError(f"the table has no score {score!r}")
    layers, per_layer = max(l for l, _ in heads) + 1, max(h for _, h in heads) + 1
    out = np.full((table.num_rows, layers, per_layer), np.nan, dtype=np.float32)
    for layer, head in heads:
        col = table.column(column_name(score, layer, head))
        out[:, layer, head] = col.to_numpy(zero_copy_only=False)
    return out


def summarize(table) -> "pyarrow.Table":  # noqa: F821
    """The per-head summary of a scores table: for each score, layer and head, how many texts
    it covers (those that did not err), the mean, the sample standard deviation (ddof 1), the
    smallest, the quantiles QUANTILES (NumPy's linear rule) and the largest. Its metadata
    says how many texts there were and how many erred."""
    pa = _pyarrow()
    rows = {k: [] for k in ("score", "layer", "head", "count", "mean", "std", "min",
                            *(_q(q) for q in QUANTILES), "max")}
    for name in score_columns(table):
        score, layer, head = name.rsplit(".", 2)
        values = table.column(name).drop_null().to_numpy().astype(np.float64)
        rows["score"].append(score)
        rows["layer"].append(int(layer))
        rows["head"].append(int(head))
        rows["count"].append(values.size)
        if values.size:
            rows["mean"].append(values.mean())
            rows["std"].append(values.std(ddof=1) if values.size > 1 else np.nan)
            rows["min"].append(values.min())
            for q, v in zip(QUANTILES, np.quantile(values, QUANTILES)):
                rows[_q(q)].append(v)
            rows["max"].append(values.max())
        else:
            for k in ("mean", "std", "min", *(_q(q) for q in QUANTILES), "max"):
                rows[k].append(np.nan)
    erred = table.num_rows - table.column("error").null_count
    summary = pa.table(rows)
    return summary.replace_schema_metadata({"texts": str(table.num_rows), "erred": str(erred)})


def _q(q: float) -> str:
    return f"q{round(q * 100):02d}"
