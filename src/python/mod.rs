//! The Python package's native module, `headmap._native` (python/, built by maturin): a model
//! loaded once from its folder, runs of it, and every number as the command line computes it —
//! the same functions, so the same bits. The GIL is released while the core computes; rayon's
//! threads do the work (`threads=` at load, else `HEADMAP_THREADS` or every core).
//!
//! Arrays cross as NumPy arrays that take over the core's own buffer: `weights` assembles one
//! `[layers, heads, Tq, Tk]` array from the run's layers and hands it over without a copy.

use std::path::PathBuf;
use std::sync::Arc;

use numpy::{PyReadonlyArray3, PyReadonlyArray4};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::run::Ablation;
use crate::{Error, MaskKind, Model, Place, Request, Run};

mod corpus;
mod run;
mod write;
use run::PyRun;

pyo3::create_exception!(
    headmap,
    HeadmapError,
    PyValueError,
    "What headmap refuses, worded as the command line words it: empty text, text past the model's positions, a broken model file, a head or place the model does not have."
);

fn refused(e: Error) -> PyErr {
    HeadmapError::new_err(e.to_string())
}

/// Runs `f` on the model's own pool when it has one, else on this thread with rayon's global
/// pool helping (`par::beside`).
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
    let model = py.detach(|| Model::from_dir(&dir)).map_err(|e| HeadmapError::new_err(e.of_folder(&dir)))?;
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
        Ok(PyRun::new(run, architecture, Arc::clone(&self.pool)))
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
        corpus::scores(self, py, texts, scores, place, metric, exclude_bos, exclude_current_token)
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
        corpus::qk_moments(self, py, texts, layer, place)
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
        corpus::qk_draw(self, py, texts, layer, count, sum, outer, place)
    }

    /// What the model predicts at every position of `texts` (a padded batch; `targets`: an
    /// encoder–decoder's decoder input): the `top_k` most likely tokens with their
    /// probabilities, with heads off (`ablate`, `mean_ablation`) and through the logit lens
    /// (`lens`) — the document `headmap predict` prints, as Python objects.
    #[pyo3(signature = (texts, targets = None, top_k = 5, lens = false, ablate = None, mean_ablation = false))]
    #[allow(clippy::too_many_arguments)]
    fn predict<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'_, PyAny>,
        targets: Option<&Bound<'_, PyAny>>,
        top_k: usize,
        lens: bool,
        ablate: Option<String>,
        mean_ablation: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let texts = self::texts(Some(texts), "texts")?;
        let targets = self::texts(targets, "targets")?;
        write::predict(self, py, write::Predict { texts, targets, top_k, lens, ablate, mean_ablation })
    }

    /// Text the model writes from `prompt` over its KV cache (an encoder–decoder translates
    /// it): greedy, or sampled with `temperature` (and `top_k`, `top_p`, `seed`), until its
    /// end token or `max_new_tokens`, with heads off — the document `headmap generate` prints.
    /// With `run=True`, `(document, run)`: the run of the prompt and every token written,
    /// like any run (`headmap.show(run)` draws it).
    #[pyo3(signature = (prompt, max_new_tokens = 20, temperature = None, top_k = None, top_p = None, seed = 0, ablate = None, mean_ablation = false, run = false))]
    #[allow(clippy::too_many_arguments)]
    fn generate<'py>(
        &self,
        py: Python<'py>,
        prompt: String,
        max_new_tokens: usize,
        temperature: Option<f32>,
        top_k: Option<usize>,
        top_p: Option<f32>,
        seed: u64,
        ablate: Option<String>,
        mean_ablation: bool,
        run: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let asked =
            write::Generate { prompt, max_new_tokens, temperature, top_k, top_p, seed, ablate, mean_ablation, run };
        write::generate(self, py, asked)
    }

    /// Activation patching of every head at `place` (default as for `ablate`): each head's
    /// output from the `clean` run written into the `corrupt` one, and how much of logit(`answer`)
    /// − logit(`wrong`) at `position` it brings back, (patched − corrupt) / (clean − corrupt) —
    /// TransformerLens's `get_act_patch_attn_head_out_all_pos`. `target`: an encoder–decoder's
    /// decoder input, the same for both runs. The document `headmap patch` prints.
    #[pyo3(signature = (clean, corrupt, answer, wrong, target = None, position = None, place = None))]
    #[allow(clippy::too_many_arguments)]
    fn patch<'py>(
        &self,
        py: Python<'py>,
        clean: String,
        corrupt: String,
        answer: String,
        wrong: String,
        target: Option<String>,
        position: Option<usize>,
        place: Option<String>,
    ) -> PyResult<Bound<'py, PyAny>> {
        write::patch(self, py, write::Patch { clean, corrupt, answer, wrong, target, position, place })
    }

    fn __repr__(&self) -> String {
        let info = self.model.info();
        let places: Vec<String> =
            info.places.iter().map(|p| format!("{} {}×{}", p.place.name(), p.layers, p.heads)).collect();
        format!("<headmap.Model {}: {}>", info.architecture, places.join(", "))
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
