//! The Python package's native module, `headmap._native` (python/, built by maturin): a model
//! loaded once from its folder, runs of it, and every number as the command line computes it —
//! the same functions, so the same bits. The GIL is released while the core computes; rayon's
//! threads do the work (`threads=` at load, else `HEADMAP_THREADS` or every core).
//!
//! Arrays cross as NumPy arrays that take over the core's own buffer: `weights` assembles one
//! `[layers, heads, Tq, Tk]` array from the run's layers and hands it over without a copy.

use std::path::PathBuf;
use std::sync::Arc;

use ndarray::{s, Array1, Array2, Array3, Array4, Axis};
use numpy::{IntoPyArray, PyArray2, PyArray3, PyArray4, PyReadonlyArray3, PyReadonlyArray4};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use rayon::prelude::*;

use crate::heads::{self, Metric, Score, ScoreOptions};
use crate::qk::moments::Moments;
use crate::qk::Corpus;
use crate::rollout::{rollout, Fusion};
use crate::run::Ablation;
use crate::{Error, MaskKind, Model, Place, PlaceRun, Request, Run};

pyo3::create_exception!(
    headmap,
    HeadmapError,
    PyValueError,
    "What headmap refuses, worded as the command line words it: empty text, text past the model's positions, a broken model file, a head or place the model does not have."
);

fn refused(e: Error) -> PyErr {
    HeadmapError::new_err(e.to_string())
}

/// Runs `f` on the model's own pool when it has one, else on rayon's global pool.
fn on_pool<R: Send>(pool: &Option<rayon::ThreadPool>, f: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// A real model, loaded once: `headmap.load(dir)`.
#[pyclass(frozen, module = "headmap._native", name = "Model")]
pub struct PyModel {
    model: Arc<Model>,
    pool: Arc<Option<rayon::ThreadPool>>,
}

/// Loads a model folder as it comes from the Hugging Face Hub (config.json, model.safetensors
/// or its shards, tokenizer.json). `threads`: the threads its runs use (default
/// `HEADMAP_THREADS`, else every core).
#[pyfunction]
#[pyo3(signature = (dir, threads = None))]
fn load(py: Python<'_>, dir: PathBuf, threads: Option<usize>) -> PyResult<PyModel> {
    let pool = match threads {
        Some(0) => return Err(PyValueError::new_err("threads must be at least 1")),
        Some(n) => Some(crate::par::pool(n).map_err(refused)?),
        None => None,
    };
    let model = py.detach(|| Model::from_dir(&dir)).map_err(|e| match e {
        Error::File { .. } => refused(e),
        e => HeadmapError::new_err(format!("{}: {e}", dir.display())),
    })?;
    Ok(PyModel { model: Arc::new(model), pool: Arc::new(pool) })
}

/// Text or texts: one string is a batch of one.
fn texts(value: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Vec<String>> {
    let Some(value) = value else { return Ok(Vec::new()) };
    if let Ok(one) = value.extract::<String>() {
        return Ok(vec![one]);
    }
    value
        .extract::<Vec<String>>()
        .map_err(|_| PyValueError::new_err(format!("{what} must be a string or a list of strings")))
}

fn place_of(name: Option<&str>) -> PyResult<Option<Place>> {
    name.map(Place::parse).transpose().map_err(refused)
}

/// Texts a corpus's moments are added up in, on one thread each: fixed, so that the sums come
/// out the same on any number of threads.
const QK_GROUP: usize = 16;

impl PyModel {
    /// `place` of the model, or its first.
    fn place_info(&self, place: Option<&str>) -> PyResult<&crate::run::PlaceInfo> {
        let info = self.model.info();
        match place_of(place)? {
            Some(wanted) => info.places.iter().find(|p| p.place == wanted).ok_or_else(|| {
                refused(Error::PlaceAbsent {
                    place: wanted.name().into(),
                    have: info.places.iter().map(|p| p.place.name().to_string()).collect(),
                })
            }),
            None => info.places.first().ok_or_else(|| HeadmapError::new_err("the model has no place")),
        }
    }

    /// One text run alone at `place`, through `layer` only: its vectors are what a picture takes.
    fn vectors_of(&self, text: &str, place: Place, layer: usize) -> Result<Run, Error> {
        let request = Request {
            texts: vec![text.to_string()],
            place: Some(place),
            through_layer: Some(layer),
            ..Request::default()
        };
        self.model.run_weights(&request)
    }
}

#[pymethods]
impl PyModel {
    /// The model's architecture, places (each with its mask, layers, heads, key–value heads
    /// and d_k), the most tokens a text may have and d_model.
    #[getter]
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let info = self.model.info();
        let doc = PyDict::new(py);
        doc.set_item("architecture", &info.architecture)?;
        doc.set_item("encoder_decoder", info.encoder_decoder)?;
        doc.set_item("max_tokens", info.max_tokens)?;
        doc.set_item("d_model", info.d_model)?;
        let places = PyList::empty(py);
        for p in &info.places {
            let place = PyDict::new(py);
            place.set_item("place", p.place.name())?;
            place.set_item("mask", p.mask.name())?;
            place.set_item("layers", p.layers)?;
            place.set_item("heads", p.heads)?;
            place.set_item("kv_heads", p.kv_heads)?;
            place.set_item("d_k", p.d_k)?;
            places.append(place)?;
        }
        doc.set_item("places", places)?;
        Ok(doc)
    }

    /// Runs the model on `texts` (a string or a list: a padded batch) and keeps the attention
    /// of `place` (default every place). `targets`: an encoder–decoder's decoder input, one per
    /// text. `mask`: run `place` with another mask (a what-if). `ablate`: heads turned off,
    /// `"L.H,..."` as the command line's --ablate; `mean_ablation`: by their mean output.
    #[pyo3(signature = (texts, targets = None, place = None, mask = None, ablate = None, mean_ablation = false))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
        targets: Option<&Bound<'_, PyAny>>,
        place: Option<&str>,
        mask: Option<&str>,
        ablate: Option<String>,
        mean_ablation: bool,
    ) -> PyResult<PyRun> {
        let request = Request {
            texts: self::texts(Some(texts), "texts")?,
            targets: self::texts(targets, "targets")?,
            place: place_of(place)?,
            mask: mask.map(MaskKind::parse).transpose().map_err(refused)?,
            ablate,
            ablation: if mean_ablation { Ablation::Mean } else { Ablation::Zero },
            ..Request::default()
        };
        let (model, pool) = (&self.model, &self.pool);
        let run = py.detach(|| on_pool(pool, || model.run_weights(&request))).map_err(refused)?;
        let architecture = self.model.info().architecture.clone();
        Ok(PyRun { run: Arc::new(run), architecture, pool: Arc::clone(&self.pool) })
    }

    /// Every head's scores for each text run alone (a batch of one, so exactly what
    /// `run(text).heads(...)` gives), the texts spread over the threads: what a corpus needs.
    /// A text the model refuses (empty, past its positions) is no failure of the call: its row
    /// is NaN and its error says why. Returns `{"scores": names, "values": float32 [texts,
    /// scores, layers, heads], "tokens": int64 [texts] (the text's tokens at `place`, 0 where
    /// it erred), "errors": [str or None]}`.
    #[pyo3(signature = (texts, scores = None, place = None, metric = "mul", exclude_bos = false, exclude_current_token = false))]
    #[allow(clippy::too_many_arguments)]
    fn scores<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
        scores: Option<Vec<String>>,
        place: Option<&str>,
        metric: &str,
        exclude_bos: bool,
        exclude_current_token: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let at = self.place_info(place)?;
        let asked = scores
            .map(|names| names.iter().map(|n| Score::parse(n)).collect::<Result<Vec<_>, _>>())
            .transpose()
            .map_err(refused)?
            .unwrap_or_default();
        let wanted = heads::each::wanted_at(at.place, &asked).map_err(refused)?;
        let options = ScoreOptions {
            metric: Metric::parse(metric).map_err(refused)?,
            exclude_bos,
            exclude_current_token,
            queries: None,
        };
        let results =
            py.detach(|| on_pool(&self.pool, || heads::each::each_text(&self.model, &texts, at, &wanted, &options)));
        let mut values = Array4::<f32>::from_elem((texts.len(), wanted.len(), at.layers, at.heads), f32::NAN);
        let mut tokens = Array1::<i64>::zeros(texts.len());
        let errors = PyList::empty(py);
        for (i, result) in results.into_iter().enumerate() {
            match result {
                Ok(heads::each::TextScores { tokens: count, scores: table }) => {
                    tokens[i] = count as i64;
                    for (k, scores) in table.into_iter().enumerate() {
                        values.slice_mut(s![i, k, .., ..]).assign(&scores);
                    }
                    errors.append(py.None())?;
                }
                Err(e) => errors.append(e.to_string())?,
            }
        }
        let doc = PyDict::new(py);
        doc.set_item("scores", wanted.iter().map(|s| s.name()).collect::<Vec<_>>())?;
        doc.set_item("values", values.into_pyarray(py))?;
        doc.set_item("tokens", tokens.into_pyarray(py))?;
        doc.set_item("errors", errors)?;
        Ok(doc)
    }

    /// The query–key moments of every head of `layer` at `place` over `texts`, each run alone
    /// (through `layer` only): what a corpus's picture is made of, added up text by text (in
    /// groups of [`QK_GROUP`] over the threads, merged in order, so any number of threads gives
    /// the same bits). Returns `{"heads", "d_k", "count": int64 [2] (queries, keys), "sum":
    /// float64 [heads, 2, d_k], "outer": float64 [heads, 2, d_k, d_k], "tokens": int64 [texts, 2]
    /// (each text's queries and keys, 0 where it erred), "errors": [str or None]}`; a text that
    /// errs adds nothing and says why.
    #[pyo3(signature = (texts, layer, place = None))]
    fn qk_moments<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
        layer: usize,
        place: Option<&str>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let at = self.place_info(place)?;
        Error::check_index("layer", layer, at.layers).map_err(refused)?;
        let (heads, d_k, place) = (at.heads, at.d_k, at.place);
        let group = |texts: &[String]| {
            let mut corpus = Corpus::with_limits(usize::MAX, usize::MAX);
            let outcomes: Vec<Result<[usize; 2], Error>> = texts
                .iter()
                .map(|text| {
                    let run = self.vectors_of(text, place, layer)?;
                    let row = run.place(place)?.row(0)?;
                    corpus.add(row, layer)?;
                    let valid = |v: &[bool]| v.iter().filter(|&&v| v).count();
                    Ok([valid(&row.query_valid), valid(&row.key_valid)])
                })
                .collect();
            let moments = (0..heads)
                .map(|h| if corpus.sentences.is_empty() { Ok(Moments::new(d_k)) } else { corpus.moments(h) })
                .collect::<Result<Vec<_>, Error>>();
            (outcomes, moments)
        };
        let groups: Vec<_> = py.detach(|| on_pool(&self.pool, || texts.par_chunks(QK_GROUP).map(group).collect()));
        let mut total: Vec<Moments> = (0..heads).map(|_| Moments::new(d_k)).collect();
        let mut tokens = Array2::<i64>::zeros((texts.len(), 2));
        let errors = PyList::empty(py);
        for (g, (outcomes, moments)) in groups.into_iter().enumerate() {
            for (h, m) in moments.map_err(refused)?.iter().enumerate() {
                total[h].merge(m).map_err(refused)?;
            }
            for (i, outcome) in outcomes.into_iter().enumerate() {
                match outcome {
                    Ok(counts) => {
                        let n = g * QK_GROUP + i;
                        tokens[[n, 0]] = counts[0] as i64;
                        tokens[[n, 1]] = counts[1] as i64;
                        errors.append(py.None())?;
                    }
                    Err(e) => errors.append(e.to_string())?,
                }
            }
        }
        let mut sum = Array3::<f64>::zeros((heads, 2, d_k));
        let mut outer = Array4::<f64>::zeros((heads, 2, d_k, d_k));
        for (h, m) in total.iter().enumerate() {
            for side in 0..2 {
                sum.slice_mut(s![h, side, ..]).assign(&m.sum[side]);
                outer.slice_mut(s![h, side, .., ..]).assign(&m.outer[side]);
            }
        }
        let count = total.first().map_or([0, 0], |m| m.count);
        let doc = PyDict::new(py);
        doc.set_item("heads", heads)?;
        doc.set_item("d_k", d_k)?;
        doc.set_item("count", Array1::from(count.map(|n| n as i64).to_vec()).into_pyarray(py))?;
        doc.set_item("sum", sum.into_pyarray(py))?;
        doc.set_item("outer", outer.into_pyarray(py))?;
        doc.set_item("tokens", tokens.into_pyarray(py))?;
        doc.set_item("errors", errors)?;
        Ok(doc)
    }

    /// Every head's picture of `texts` (the points drawn) on the axes of `moments` (from
    /// `qk_moments`, added up over the whole corpus): `{"heads", "sentences": [{"queryPositions",
    /// "keyPositions", "queries": [{"label", "kind", "text"}], "keys"}], "pictures": [{"queries",
    /// "keys", "coords": [x, y, …] (queries first), "norms", "explained", "correlation":
    /// [before, after], "scale"}]}`, laid out as the page's query–key view takes it.
    #[pyo3(signature = (texts, layer, count, sum, outer, place = None))]
    #[allow(clippy::too_many_arguments)]
    fn qk_draw<'py>(
        &self,
        py: Python<'py>,
        texts: Vec<String>,
        layer: usize,
        count: [usize; 2],
        sum: PyReadonlyArray3<'py, f64>,
        outer: PyReadonlyArray4<'py, f64>,
        place: Option<&str>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let at = self.place_info(place)?;
        Error::check_index("layer", layer, at.layers).map_err(refused)?;
        let (heads, d_k, place) = (at.heads, at.d_k, at.place);
        let (sum, outer) = (sum.as_array(), outer.as_array());
        if sum.dim() != (heads, 2, d_k) || outer.dim() != (heads, 2, d_k, d_k) {
            let got = [sum.shape(), outer.shape()].concat();
            return Err(refused(Error::shape("the moments", &got, &[heads, 2, d_k, heads, 2, d_k, d_k])));
        }
        let axes = (0..heads)
            .map(|h| {
                let side = |i: usize| (sum.slice(s![h, i, ..]).to_owned(), outer.slice(s![h, i, .., ..]).to_owned());
                let ((sq, oq), (sk, ok)) = (side(0), side(1));
                Moments::from_parts(count, [sq, sk], [oq, ok])?.axes()
            })
            .collect::<Result<Vec<_>, Error>>()
            .map_err(refused)?;
        let drawn = py.detach(|| {
            on_pool(&self.pool, || {
                let mut corpus = Corpus::with_limits(usize::MAX, usize::MAX);
                let mut labels = Vec::with_capacity(texts.len());
                for text in &texts {
                    let run = self.vectors_of(text, place, layer)?;
                    let row = run.place(place)?.row(0)?;
                    corpus.add(row, layer)?;
                    labels.push((row.queries.clone(), row.keys.clone()));
                }
                let pictures = (0..heads).map(|h| corpus.picture_on(h, &axes[h])).collect::<Result<Vec<_>, Error>>()?;
                Ok::<_, Error>((corpus, labels, pictures))
            })
        });
        let (corpus, labels, pictures) = drawn.map_err(refused)?;
        let token = |t: &crate::tokenize::Token| -> PyResult<Bound<'py, PyDict>> {
            let d = PyDict::new(py);
            d.set_item("label", &t.label)?;
            d.set_item("kind", t.kind.name())?;
            d.set_item("text", &t.text)?;
            Ok(d)
        };
        let sentences = PyList::empty(py);
        for (sentence, (queries, keys)) in corpus.sentences.iter().zip(&labels) {
            let d = PyDict::new(py);
            d.set_item("queryPositions", &sentence.query_positions)?;
            d.set_item("keyPositions", &sentence.key_positions)?;
            let side = |tokens: &[crate::tokenize::Token], at: &[usize]| -> PyResult<Bound<'py, PyList>> {
                let list = PyList::empty(py);
                for &p in at {
                    list.append(token(&tokens[p])?)?;
                }
                Ok(list)
            };
            d.set_item("queries", side(queries, &sentence.query_positions)?)?;
            d.set_item("keys", side(keys, &sentence.key_positions)?)?;
            sentences.append(d)?;
        }
        let (nq, nk) = corpus.size();
        let drawn = PyList::empty(py);
        for p in &pictures {
            let d = PyDict::new(py);
            d.set_item("queries", nq)?;
            d.set_item("keys", nk)?;
            d.set_item("coords", p.coords.iter().copied().collect::<Vec<f32>>())?;
            d.set_item("norms", &p.norms)?;
            d.set_item("explained", &p.explained)?;
            d.set_item("correlation", p.correlation.to_vec())?;
            d.set_item("scale", p.scale)?;
            drawn.append(d)?;
        }
        let doc = PyDict::new(py);
        doc.set_item("heads", heads)?;
        doc.set_item("sentences", sentences)?;
        doc.set_item("pictures", drawn)?;
        Ok(doc)
    }

    fn __repr__(&self) -> String {
        let info = self.model.info();
        let places: Vec<String> =
            info.places.iter().map(|p| format!("{} {}×{}", p.place.name(), p.layers, p.heads)).collect();
        format!("<headmap.Model {}: {}>", info.architecture, places.join(", "))
    }
}

/// One run of a model: its attention at every place kept, for every batch row.
#[pyclass(frozen, module = "headmap._native", name = "Run")]
pub struct PyRun {
    run: Arc<Run>,
    architecture: String,
    pool: Arc<Option<rayon::ThreadPool>>,
}

impl PyRun {
    /// `place` of the run, or the first it kept.
    fn kept(&self, place: Option<&str>) -> PyResult<&PlaceRun> {
        match place_of(place)? {
            Some(place) => self.run.place(place).map_err(refused),
            None => self.run.places.first().ok_or_else(|| HeadmapError::new_err("the run kept no attention")),
        }
    }
}

#[pymethods]
impl PyRun {
    /// The model's architecture (config.json's model_type).
    #[getter]
    fn model_type(&self) -> &str {
        &self.architecture
    }

    /// The places the run kept, in order.
    #[getter]
    fn places(&self) -> Vec<&'static str> {
        self.run.places.iter().map(|p| p.place.name()).collect()
    }

    /// The batch's rows.
    #[getter]
    fn batch(&self) -> usize {
        self.run.batch()
    }

    /// Every weight of one batch row at `place` (default the first kept): float32
    /// `[layers, heads, Tq, Tk]`, padded rows and columns included (see `tokens`).
    #[pyo3(signature = (place = None, row = 0))]
    fn weights<'py>(&self, py: Python<'py>, place: Option<&str>, row: usize) -> PyResult<Bound<'py, PyArray4<f32>>> {
        let row = self.kept(place)?.row(row).map_err(refused)?;
        let weights = py.detach(|| on_pool(&self.pool, || row.weights())).map_err(refused)?;
        Ok(weights.into_pyarray(py))
    }

    /// One batch row's tokens at `place`: `{"queries", "keys"}` (labels as the figures show
    /// them), with `query_valid` and `key_valid` (false for padding) and the mask.
    #[pyo3(signature = (place = None, row = 0))]
    fn tokens<'py>(&self, py: Python<'py>, place: Option<&str>, row: usize) -> PyResult<Bound<'py, PyDict>> {
        let kept = self.kept(place)?;
        let row = kept.row(row).map_err(refused)?;
        let labels = |tokens: &[crate::tokenize::Token]| tokens.iter().map(|t| t.label.clone()).collect::<Vec<_>>();
        let doc = PyDict::new(py);
        doc.set_item("queries", labels(&row.queries))?;
        doc.set_item("keys", labels(&row.keys))?;
        doc.set_item("query_valid", row.query_valid.clone())?;
        doc.set_item("key_valid", row.key_valid.clone())?;
        doc.set_item("mask", kept.mask.name())?;
        doc.set_item("what_if", kept.what_if)?;
        Ok(doc)
    }

    /// Every head's scores for one batch row at `place`: `{score: float32 [layers, heads]}` —
    /// all the place takes by default, or those named in `scores`. `queries` with `keys`
    /// (positions) add `"mass"`: the weight from those queries to those keys.
    #[pyo3(signature = (scores = None, place = None, row = 0, metric = "mul", exclude_bos = false, exclude_current_token = false, queries = None, keys = None))]
    #[allow(clippy::too_many_arguments)]
    fn heads<'py>(
        &self,
        py: Python<'py>,
        scores: Option<Vec<String>>,
        place: Option<&str>,
        row: usize,
        metric: &str,
        exclude_bos: bool,
        exclude_current_token: bool,
        queries: Option<Vec<usize>>,
        keys: Option<Vec<usize>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let kept = self.kept(place)?;
        let at = kept.place;
        let row = kept.row(row).map_err(refused)?;
        let options = ScoreOptions {
            metric: Metric::parse(metric).map_err(refused)?,
            exclude_bos,
            exclude_current_token,
            queries: None,
        };
        let wanted = scores
            .map(|names| names.iter().map(|n| Score::parse(n)).collect::<Result<Vec<_>, _>>())
            .transpose()
            .map_err(refused)?;
        let mass_at = match (queries, keys) {
            (Some(q), Some(k)) => Some((q, k)),
            (None, None) => None,
            _ => return Err(PyValueError::new_err("queries and keys go together")),
        };
        let (table, mass) = py
            .detach(|| {
                on_pool(&self.pool, || {
                    let table: Vec<(Score, Array2<f32>)> = match &wanted {
                        None => heads::all_scores(row, at, &options)?,
                        Some(wanted) => wanted
                            .iter()
                            .map(|&s| Ok((s, heads::scores(row, at, s, &options)?)))
                            .collect::<Result<_, Error>>()?,
                    };
                    let mass = mass_at.as_ref().map(|(q, k)| heads::mass(row, q, k)).transpose()?;
                    Ok::<_, Error>((table, mass))
                })
            })
            .map_err(refused)?;
        let doc = PyDict::new(py);
        for (score, values) in table {
            doc.set_item(score.name(), values.into_pyarray(py))?;
        }
        if let Some(mass) = mass {
            doc.set_item("mass", mass.into_pyarray(py))?;
        }
        Ok(doc)
    }

    /// Attention rollout of one batch row at a self-attention `place`: float32
    /// `[layers, Tq, Tk]`, layer l being what each token draws on each input token after it.
    /// `fusion`: how a layer's heads become one matrix (mean, max or min).
    #[pyo3(signature = (fusion = "mean", place = None, row = 0))]
    fn rollout<'py>(
        &self,
        py: Python<'py>,
        fusion: &str,
        place: Option<&str>,
        row: usize,
    ) -> PyResult<Bound<'py, PyArray3<f32>>> {
        let kept = self.kept(place)?;
        let fusion = Fusion::parse(fusion).map_err(refused)?;
        let row = kept.row(row).map_err(refused)?;
        let layers = py.detach(|| on_pool(&self.pool, || rollout(row, kept.place, fusion))).map_err(refused)?;
        let views: Vec<_> = layers.iter().map(|l| l.view()).collect();
        let stacked: Array3<f32> = ndarray::stack(Axis(0), &views).map_err(|e| HeadmapError::new_err(e.to_string()))?;
        Ok(stacked.into_pyarray(py))
    }

    /// One head's query and key vectors in `layer` for one batch row, as its scores use them:
    /// `{"queries": [Tq, d_k], "keys": [Tk, d_k], "divisor"}`, QKᵀ ÷ divisor being what the
    /// mask and softmax get (√d_k, or 1 for a model that folds it into its weights).
    #[pyo3(signature = (layer, head, place = None, row = 0))]
    fn vectors<'py>(
        &self,
        py: Python<'py>,
        layer: usize,
        head: usize,
        place: Option<&str>,
        row: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        let row = self.kept(place)?.row(row).map_err(refused)?;
        let (q, k, divisor) = py.detach(|| on_pool(&self.pool, || row.queries_keys(layer))).map_err(refused)?;
        Error::check_index("head", head, q.len_of(Axis(0))).map_err(refused)?;
        let doc = PyDict::new(py);
        let one =
            |a: &Array3<f32>| -> Bound<'py, PyArray2<f32>> { a.index_axis(Axis(0), head).to_owned().into_pyarray(py) };
        doc.set_item("queries", one(&q))?;
        doc.set_item("keys", one(&k))?;
        doc.set_item("divisor", divisor)?;
        Ok(doc)
    }

    fn __repr__(&self) -> String {
        let places: Vec<String> = self
            .run
            .places
            .iter()
            .map(|p| {
                let (_, tq, tk) = p.shape();
                format!("{} {}×{} · {} row(s) · {tq}×{tk}", p.place.name(), p.layers(), p.heads(), p.batch())
            })
            .collect();
        format!("<headmap.Run {}>", places.join("; "))
    }
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_class::<PyModel>()?;
    m.add_class::<PyRun>()?;
    m.add("HeadmapError", m.py().get_type::<HeadmapError>())?;
    Ok(())
}
