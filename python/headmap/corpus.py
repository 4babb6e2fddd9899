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

import hashlib
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


# Bytes of one line of a text or JSONL corpus read at most, as the command line reads them
# (src/bin/headmap/corpus/read.rs): a text is at most 32,768 characters, and a JSONL row may
# carry other fields beside it.
LINE_BYTES = 16 << 20


def _lines(path):
    """(line number from 0, its text or None, why not): a line that is not UTF-8, or longer
    than LINE_BYTES, is its own error, not the file's; the rest of a long line is passed over
    unread."""
    with open(path, "rb") as f:
        number = 0
        while raw := f.readline(LINE_BYTES + 1):
            if len(raw) > LINE_BYTES and not raw.endswith(b"\n"):
                while (rest := f.readline(1 << 20)) and not rest.endswith(b"\n"):
                    pass
                yield number, None, f"line {number + 1} is longer than {LINE_BYTES >> 20} MB"
            else:
                try:
                    yield number, raw.decode("utf-8").rstrip("\r\n"), None
                except UnicodeDecodeError:
                    yield number, None, f"line {number + 1} is not UTF-8 text"
            number += 1


def _from_jsonl(path, column, id_column):
    for line_number, line, why in _lines(path):
        id_ = line_number
        if why is not None:
            yield (id_, None, why)
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            yield (id_, None, f"line {line_number + 1} is not JSON")
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
    yield from _lines(path)


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
            try:
                file = pa.parquet.ParquetFile(path)
            except (pa.ArrowInvalid, OSError) as e:
                raise ValueError(f"{path} is not a Parquet file headmap can read: {e}") from e
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
    columns = {"id": _array(pa, ids), "tokens": pa.array(tokens), "error": pa.array(error, type=pa.string())}
    for name, vals in (extra or {}).items():
        columns[name] = _array(pa, vals)
    for s, score in enumerate(names):
        for layer in range(values.shape[2]):
            for head in range(values.shape[3]):
                columns[column_name(score, layer, head)] = pa.array(values[:, s, layer, head], mask=erred)
    return pa.RecordBatch.from_pydict(columns)


def _array(pa, values):
    """`values` as an Arrow array; ids of mixed types (a JSONL file's 3 and "a") as their text,
    so that no id sinks the batch."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


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


# -- the query–key picture of a corpus ------------------------------------------------------------

#: The format name of a picture file: what the explorer's query–key panel and view="qk" open.
QK_FORMAT = "headmap.qk"


def _priority(seed: int, id_) -> float:
    """A sentence's place in the sample, from the seed and its id alone (not from when it
    comes), so that any order, any batching and any number of Ray actors keep the same ones."""
    digest = hashlib.blake2b(f"{seed}\0{id_!r}".encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


class QkAccumulator:
    """A corpus's query–key picture as it is read: every head's moments of `layer` added up
    (the axes come from them, exact over every token), and the sample of sentences drawn —
    those of lowest priority (a hash of the seed and the id) whose queries and keys together
    fit in `max_points`. Two accumulators of parts of a corpus merge into the one of the whole."""

    def __init__(self, layer: int, max_points: int, seed: int = 0):
        if max_points < 1:
            raise ValueError("max_points must be at least 1")
        self.layer, self.max_points, self.seed = layer, max_points, seed
        self.count = np.zeros(2, dtype=np.int64)
        self.sum = self.outer = None
        self.texts = self.erred = 0
        self.sample = []  # (priority, id, text, points), lowest priority first
        self.cut = float("inf")  # priorities from here on are left out of the sample

    def add(self, model, ids, texts, errors, place=None):
        """Adds one batch of rows (`texts` None where `errors` says why already)."""
        self.texts += len(ids)
        good = [i for i, e in enumerate(errors) if e is None]
        self.erred += len(ids) - len(good)
        m = model.qk_moments([texts[i] for i in good], self.layer, place=place)
        self._add_moments(m["count"], m["sum"], m["outer"])
        candidates = []
        for k, i in enumerate(good):
            if m["errors"][k] is not None:
                self.erred += 1
                continue
            candidates.append((_priority(self.seed, ids[i]), ids[i], texts[i], int(m["tokens"][k].sum())))
        self._offer(candidates)

    def _add_moments(self, count, sum_, outer):
        self.count += np.asarray(count, dtype=np.int64)
        if self.sum is None:
            self.sum, self.outer = np.array(sum_, dtype=np.float64), np.array(outer, dtype=np.float64)
        else:
            self.sum += sum_
            self.outer += outer

    def _offer(self, candidates):
        # the sample is the longest run of sentences, lowest priority first, that fits: a
        # sentence past the cut never enters, and what no longer fits moves the cut down
        for c in candidates:
            if c[0] < self.cut:
                self.sample.append(c)
        self.sample.sort(key=lambda c: c[0])
        total, kept = 0, []
        for c in self.sample:
            if total + c[3] > self.max_points:
                self.cut = min(self.cut, c[0])
                break
            total += c[3]
            kept.append(c)
        self.sample = kept

    def merge(self, other: "QkAccumulator"):
        """Adds what `other` read (another part of the same corpus, same layer and seed)."""
        if (other.layer, other.max_points, other.seed) != (self.layer, self.max_points, self.seed):
            raise ValueError("only pictures of the same layer, max_points and seed merge")
        self.texts += other.texts
        self.erred += other.erred
        if other.sum is not None:
            self._add_moments(other.count, other.sum, other.outer)
        self.cut = min(self.cut, other.cut)
        self._offer(other.sample)

    def picture(self, model, head: int = 0, place=None) -> dict:
        """The picture file's document: the sample's points on the axes of the whole corpus."""
        if self.sum is None or self.count.sum() == 0:
            raise ValueError(f"no text of the corpus could be drawn ({self.erred} of {self.texts} erred)")
        if not self.sample:
            raise ValueError(f"no sentence fits in max_points={self.max_points}: raise it")
        check_head(model, self.layer, head, place)
        info = _place_info(model, place)
        drawn = model.qk_draw([c[2] for c in self.sample], self.layer, [int(n) for n in self.count],
                              self.sum, self.outer, place=place)
        for p in drawn["pictures"]:
            for key in ("coords", "norms"):
                p[key] = [round(x, 6) for x in p[key]]
        ids = [c[1] if isinstance(c[1], (int, str)) else str(c[1]) for c in self.sample]
        return {
            "format": QK_FORMAT,
            "version": 1,
            "model_type": model.info["architecture"],
            "place": info["place"],
            "layer": self.layer,
            "head": head,
            "corpus": {"texts": self.texts, "erred": self.erred, "queries": int(self.count[0]),
                       "keys": int(self.count[1])},
            "lines": [c[2] for c in self.sample],
            "ids": ids,
            **drawn,
        }


def check_head(model, layer: int, head: int, place=None):
    """Refuses a layer or head the model's place does not have, before any text is read."""
    info = _place_info(model, place)
    if not 0 <= layer < info["layers"]:
        raise ValueError(f"no layer {layer}: the {info['place']} place has layers 0 to {info['layers'] - 1}")
    if not 0 <= head < info["heads"]:
        raise ValueError(f"no head {head}: the {info['place']} place has heads 0 to {info['heads'] - 1}")


def _place_info(model, place):
    places = model.info["places"]
    for p in places:
        if place is None or p["place"] == place:
            return p
    raise ValueError(f"the model has no place {place!r} (it has {', '.join(p['place'] for p in places)})")


def qk_picture(model, source, layer: int, head: int = 0, *, place: Optional[str] = None,
               column: str = "text", id_column: Optional[str] = None, max_points: int = 8000,
               batch_size: int = 256, seed: int = 0, out=None, progress: bool = True) -> dict:
    """The query–key picture (AttentionViz's joint embedding, then PCA) of every head of
    `layer` over a whole corpus: the axes from every token of every text, added up in one pass
    (exact), and the points of a sample of sentences — at most `max_points` queries and keys —
    placed on them. Returns the document the explorer's query–key panel and `view="qk"` open
    (format "headmap.qk"), and writes it as JSON to `out` when given. `head` is the head shown
    first. Sources as `scores` takes them; a text that errs is counted, never drawn."""
    if batch_size < 1:
        raise ValueError("batch_size must be at least 1")
    check_head(model, layer, head, place)
    acc = QkAccumulator(layer, max_points, seed)
    rows, total = _source(source, column, id_column, batch_size)
    bar = _progress(total) if progress else None
    for chunk in _chunks(rows, batch_size):
        ids, texts, errors = (list(c) for c in zip(*chunk))
        acc.add(model, ids, texts, errors, place=place)
        if bar is not None:
            bar.update(len(chunk))
    if bar is not None:
        bar.close()
    doc = acc.picture(model, head, place=place)
    if out is not None:
        write_picture(doc, out)
    return doc


def write_picture(doc: dict, path) -> None:
    """Writes a picture document as the JSON file the explorer opens."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
