//! A run of a model from Python (`model.run(texts)`): its weights, tokens, head scores,
//! rollout and one head's vectors, each as the command line computes them.

use std::sync::Arc;

use ndarray::{Array2, Array3, Axis};
use numpy::{IntoPyArray, PyArray2, PyArray3, PyArray4};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{on_pool, place_of, refused, HeadmapError};
use crate::heads::{self, Metric, Score, ScoreOptions};
use crate::rollout::{rollout, Fusion};
use crate::{Error, PlaceRun, Run};

/// One run of a model: its attention at every place kept, for every batch row.
#[pyclass(frozen, module = "headmap._native", name = "Run")]
pub struct PyRun {
    run: Arc<Run>,
    architecture: String,
    pool: Arc<Option<rayon::ThreadPool>>,
}

impl PyRun {
    pub(super) fn new(run: Run, architecture: String, pool: Arc<Option<rayon::ThreadPool>>) -> Self {
        PyRun { run: Arc::new(run), architecture, pool }
    }

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
