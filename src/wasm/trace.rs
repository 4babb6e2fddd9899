//! How a run's steps leave for JavaScript: matrices as `{ rows, cols, data }`, the steps of
//! scaled dot-product attention, and one head traced from its inputs to its output.

use js_sys::Float32Array;
use ndarray::Array2;
use serde::Serialize;

use crate::attention::multi_head::HeadTrace;
use crate::attention::sdpa::Trace;

/// `{ rows, cols, data: Float32Array }`, row-major.
#[derive(Serialize)]
pub(crate) struct MatrixOut {
    rows: usize,
    cols: usize,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    data: Float32Array,
}

impl MatrixOut {
    pub(crate) fn of(m: &Array2<f32>) -> Self {
        let m = m.as_standard_layout();
        MatrixOut { rows: m.nrows(), cols: m.ncols(), data: Float32Array::from(m.as_slice().unwrap_or(&[])) }
    }
}

/// The steps of scaled dot-product attention, as [`sdpa::trace`] gives them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct StepsOut {
    tq: usize,
    tk: usize,
    scale: f32,
    scores: MatrixOut,
    scaled: MatrixOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    position_bias: Option<MatrixOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    biased: Option<MatrixOut>,
    masked: MatrixOut,
    weights: MatrixOut,
    output: MatrixOut,
    fully_masked_rows: Vec<usize>,
}

impl StepsOut {
    pub(crate) fn of(t: &Trace) -> Self {
        let (tq, tk) = t.weights.dim();
        StepsOut {
            tq,
            tk,
            scale: t.scale,
            scores: MatrixOut::of(&t.scores),
            scaled: MatrixOut::of(&t.scaled),
            position_bias: t.position_bias.as_ref().map(MatrixOut::of),
            biased: t.biased.as_ref().map(MatrixOut::of),
            masked: MatrixOut::of(&t.masked),
            weights: MatrixOut::of(&t.weights),
            output: MatrixOut::of(&t.output),
            fully_masked_rows: t.fully_masked_rows.clone(),
        }
    }
}

/// One head from the block's inputs through its slices of Q, K and V to its output.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TraceOut {
    row: usize,
    layer: usize,
    head: usize,
    kv_head: usize,
    d_model: usize,
    d_k: usize,
    x_q: MatrixOut,
    x_kv: MatrixOut,
    q: MatrixOut,
    k: MatrixOut,
    v: MatrixOut,
    #[serde(skip_serializing_if = "Option::is_none")]
    q_rotated: Option<MatrixOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    k_rotated: Option<MatrixOut>,
    #[serde(flatten)]
    steps: StepsOut,
}

impl TraceOut {
    pub(crate) fn of(t: &HeadTrace, row: usize, layer: usize, head: usize) -> Self {
        TraceOut {
            row,
            layer,
            head,
            kv_head: t.kv_head,
            d_model: t.x_q.ncols(),
            d_k: t.q.ncols(),
            x_q: MatrixOut::of(&t.x_q),
            x_kv: MatrixOut::of(&t.x_kv),
            q: MatrixOut::of(&t.q),
            k: MatrixOut::of(&t.k),
            v: MatrixOut::of(&t.v),
            q_rotated: t.q_rotated.as_ref().map(MatrixOut::of),
            k_rotated: t.k_rotated.as_ref().map(MatrixOut::of),
            steps: StepsOut::of(&t.steps),
        }
    }
}
