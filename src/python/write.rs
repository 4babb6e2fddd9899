//! What a model predicts, what it writes and which heads carry an answer, from Python: the
//! documents `headmap predict`, `headmap generate` and `headmap patch` print, as Python
//! objects — the same functions, so the same numbers.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use super::{on_pool, place_of, refused, PyModel, PyRun};
use crate::models::generate::{GenerateRequest, Sampling};
use crate::models::patch::PatchRequest;
use crate::models::predict::PredictOptions;
use crate::run::Ablation;
use crate::Request;

/// The most tokens a position lists, as the command line's `--top-k` allows.
const MAX_TOP_K: usize = 1000;

/// The document as Python objects, through its JSON: exactly what the command line prints.
fn document<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value).map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

fn ablation(mean: bool) -> Ablation {
    if mean {
        Ablation::Mean
    } else {
        Ablation::Zero
    }
}

pub(super) struct Predict {
    pub texts: Vec<String>,
    pub targets: Vec<String>,
    pub top_k: usize,
    pub lens: bool,
    pub ablate: Option<String>,
    pub mean_ablation: bool,
}

pub(super) fn predict<'py>(model: &PyModel, py: Python<'py>, asked: Predict) -> PyResult<Bound<'py, PyAny>> {
    if !(1..=MAX_TOP_K).contains(&asked.top_k) {
        return Err(PyValueError::new_err(format!("top_k must be 1 to {MAX_TOP_K}, not {}", asked.top_k)));
    }
    let m = &model.model;
    let ablate = asked.ablate.as_deref().map(|spec| m.heads(spec)).transpose().map_err(refused)?.unwrap_or_default();
    let options = PredictOptions {
        top_k: asked.top_k,
        lens: asked.lens.then_some(None),
        ablate,
        ablation: ablation(asked.mean_ablation),
    };
    let request = Request {
        texts: asked.texts,
        targets: asked.targets,
        ablate: asked.ablate,
        ablation: ablation(asked.mean_ablation),
        ..Request::default()
    };
    let pool = &model.pool;
    let predictions = py.detach(|| on_pool(pool, || m.predict(&request, &options))).map_err(refused)?;
    document(py, &predictions)
}

pub(super) struct Generate {
    pub prompt: String,
    pub max_new_tokens: usize,
    pub temperature: Option<f32>,
    pub top_k: Option<usize>,
    pub top_p: Option<f32>,
    pub seed: u64,
    pub ablate: Option<String>,
    pub mean_ablation: bool,
    pub run: bool,
}

pub(super) fn generate<'py>(model: &PyModel, py: Python<'py>, asked: Generate) -> PyResult<Bound<'py, PyAny>> {
    if asked.temperature.is_none() && (asked.top_k.is_some() || asked.top_p.is_some()) {
        return Err(PyValueError::new_err(
            "top_k and top_p shape sampling: give a temperature too (greedy decoding takes the most likely token)",
        ));
    }
    let sampling = asked.temperature.map(|temperature| Sampling {
        temperature,
        top_k: asked.top_k,
        top_p: asked.top_p,
        seed: asked.seed,
    });
    let request = GenerateRequest {
        prompt: asked.prompt,
        max_new_tokens: asked.max_new_tokens,
        sampling,
        ablate: asked.ablate,
        ablation: ablation(asked.mean_ablation),
    };
    let (m, pool) = (&model.model, &model.pool);
    let written = py.detach(|| {
        on_pool(pool, || {
            let generation = m.generate_text(&request, |_| true)?;
            let run = match asked.run {
                true => Some(m.generated_run(&request, &generation)?),
                false => None,
            };
            Ok::<_, crate::Error>((generation, run))
        })
    });
    let (generation, run) = written.map_err(refused)?;
    let doc = document(py, &generation)?;
    match run {
        None => Ok(doc),
        Some(run) => {
            let run = PyRun::new(run, m.info().architecture.clone(), std::sync::Arc::clone(pool));
            Ok((doc, run).into_pyobject(py)?.into_any())
        }
    }
}

pub(super) struct Patch {
    pub clean: String,
    pub corrupt: String,
    pub answer: String,
    pub wrong: String,
    pub target: Option<String>,
    pub position: Option<usize>,
    pub place: Option<String>,
}

/// Activation patching of every head at one place: the document `headmap patch` prints.
pub(super) fn patch<'py>(model: &PyModel, py: Python<'py>, asked: Patch) -> PyResult<Bound<'py, PyAny>> {
    let request = PatchRequest {
        clean: asked.clean,
        corrupt: asked.corrupt,
        target: asked.target,
        answer: asked.answer,
        wrong: asked.wrong,
        position: asked.position,
        place: place_of(asked.place.as_deref())?,
    };
    let (m, pool) = (&model.model, &model.pool);
    let patching = py.detach(|| on_pool(pool, || m.patch(&request, |_, _| true))).map_err(refused)?;
    document(py, &patching)
}
