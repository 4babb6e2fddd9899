//! The JavaScript face of headmap, and the only Rust module that knows about JavaScript
//! (`hf.rs` beside it adds the real models when the `hf` feature is on).
//!
//! Numbers leave as owned `Float32Array`s, row-major: weights are `[H, Tq, Tk]`, a matrix of a
//! trace `[rows, cols]` with its shape alongside. Small metadata (tokens, shapes, costs) goes
//! through serde-wasm-bindgen. Every failure is a JS `Error` whose message a user can act on.
//!
//! ```js
//! const session = new Session({ preset: "small", seed: 1 });
//! const run = session.run({ texts: ["동물이 길을 건너지 않았다."], mask: "causal" });
//! const meta = run.meta();            // { queries, keys, heads, tq, tk, layers, cost, … }
//! const w = run.weights(0, 0);        // Float32Array [H, Tq, Tk] of batch row 0, layer 0
//! const steps = session.trace(run, 0, 0, 2); // every step of head 2
//! ```

use js_sys::{Float32Array, Object, Reflect, Uint8Array};
use ndarray::{Array2, ArrayView1};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use crate::attention::mask::{Mask, MaskKind};
use crate::attention::multi_head::HeadTrace;
use crate::attention::sdpa;
use crate::cost::Cost;
use crate::error::{Error, Result};
use crate::examples::EXAMPLES;
use crate::models::run::AttentionRun;
use crate::models::toy::{ToyConfig, ToyModel, ToyRun, MAX_BATCH, PAD};
use crate::tokenize::MAX_TOKENS;

#[cfg(feature = "hf")]
pub mod hf;

#[wasm_bindgen(start)]
pub fn start() {
    // A panic that slips through shows its message in the console instead of "unreachable".
    console_error_panic_hook::set_once();
}

fn js_error(e: Error) -> JsError {
    JsError::new(&e.to_string())
}

fn from_js<T: for<'de> Deserialize<'de>>(what: &str, value: JsValue) -> Result<T, JsError> {
    serde_wasm_bindgen::from_value(value).map_err(|e| JsError::new(&format!("invalid {what}: {e}")))
}

fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsError> {
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    value.serialize(&serializer).map_err(|e| JsError::new(&format!("cannot pass a result to JavaScript: {e}")))
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct SessionSettings {
    preset: Option<String>,
    seed: Option<u64>,
    /// Sets both the encoder's and the decoder's number of layers.
    layers: Option<usize>,
}

/// A toy model in memory, ready to run texts.
#[wasm_bindgen]
pub struct Session {
    model: ToyModel,
}

#[wasm_bindgen]
impl Session {
    /// `settings`: `{ preset?: "small" | "base", seed?: number, layers?: number }`;
    /// `undefined` gives the small preset with seed 1.
    #[wasm_bindgen(constructor)]
    pub fn new(settings: JsValue) -> Result<Session, JsError> {
        let settings: SessionSettings = if settings.is_undefined() || settings.is_null() {
            SessionSettings::default()
        } else {
            from_js("settings", settings)?
        };
        let mut config = ToyConfig::preset(settings.preset.as_deref().unwrap_or("small"), settings.seed.unwrap_or(1))
            .map_err(js_error)?;
        if let Some(layers) = settings.layers {
            config.encoder_layers = layers;
            config.decoder_layers = layers;
        }
        Ok(Session { model: ToyModel::new(config).map_err(js_error)? })
    }

    /// The model's shape: `{ d_model, heads, d_k, d_ff, encoder_layers, decoder_layers, seed, trained: false }`.
    pub fn config(&self) -> Result<JsValue, JsError> {
        #[derive(Serialize)]
        struct Described {
            #[serde(flatten)]
            config: ToyConfig,
            d_k: usize,
            trained: bool,
        }
        let config = self.model.config;
        to_js(&Described { config, d_k: config.d_k(), trained: false })
    }

    /// `request`: `{ texts: string[], targets?: string[], mask: "none" | "padding" | "causal" |
    /// "cross", scale?: boolean }`. Texts form a padded batch; targets feed the decoder and
    /// default to the texts.
    pub fn run(&self, request: JsValue) -> Result<Run, JsError> {
        let request: RunRequest = from_js("request", request)?;
        let kind = MaskKind::parse(&request.mask).map_err(js_error)?;
        let texts: Vec<&str> = request.texts.iter().map(String::as_str).collect();
        let targets: Vec<&str> = request.targets.iter().map(String::as_str).collect();
        let run = self.model.run(&texts, &targets, kind, request.scale.unwrap_or(true)).map_err(js_error)?;
        Ok(Run { run })
    }

    /// Every step of head `head` in layer `layer` of batch row `row` of `run`.
    pub fn trace(&self, run: &Run, row: usize, layer: usize, head: usize) -> Result<Object, JsError> {
        let t = self.model.trace(&run.run, row, layer, head).map_err(js_error)?;
        trace_object(&t, row, layer, head)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RunRequest {
    texts: Vec<String>,
    #[serde(default)]
    targets: Vec<String>,
    mask: String,
    scale: Option<bool>,
}

/// The attention weights of one run, kept in wasm memory until asked for.
#[wasm_bindgen]
pub struct Run {
    run: ToyRun,
}

#[wasm_bindgen]
impl Run {
    /// Tokens, shapes and costs:
    /// `{ mask, scale, batch, layers, heads, tq, tk, queries: string[][], keys: string[][],
    /// queryValid: bool[][], keyValid: bool[][], fullyMaskedRows: number[][],
    /// cost: { score_macs, flops, weight_bytes } }`.
    pub fn meta(&self) -> Result<JsValue, JsError> {
        run_meta(&self.run)
    }

    /// The weights of batch row `row`, layer `layer`: `Float32Array` `[H, Tq, Tk]`, row-major.
    pub fn weights(&self, row: usize, layer: usize) -> Result<Float32Array, JsError> {
        run_weights(&self.run, row, layer)
    }

    /// The entropy in bits of every query row of batch row `row`, layer `layer`:
    /// `Float32Array` `[H, Tq]`.
    pub fn entropies(&self, row: usize, layer: usize) -> Result<Float32Array, JsError> {
        run_entropies(&self.run, row, layer)
    }

    /// Which cells of batch row `row` the mask lets through: `Uint8Array` `[Tq, Tk]`, 1 where
    /// query i may see key j, 0 where the cell is masked.
    pub fn allowed(&self, row: usize) -> Result<Uint8Array, JsError> {
        run_allowed(&self.run, row)
    }

    /// One head max-pooled to `[height, width]` pixels for drawing (-1 where all is masked).
    pub fn pooled(
        &self,
        row: usize,
        layer: usize,
        head: usize,
        height: usize,
        width: usize,
    ) -> Result<Float32Array, JsError> {
        run_pooled(&self.run, row, layer, head, height, width)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RunMeta<'a> {
    mask: MaskKind,
    scale: bool,
    batch: usize,
    layers: usize,
    heads: usize,
    tq: usize,
    tk: usize,
    queries: &'a [Vec<String>],
    keys: &'a [Vec<String>],
    query_valid: &'a [Vec<bool>],
    key_valid: &'a [Vec<bool>],
    fully_masked_rows: &'a [Vec<usize>],
    cost: Cost,
}

pub(crate) fn run_meta(r: &AttentionRun) -> Result<JsValue, JsError> {
    let (heads, tq, tk) = r.shape();
    to_js(&RunMeta {
        mask: r.kind,
        scale: r.scale,
        batch: r.batch(),
        layers: r.layers(),
        heads,
        tq,
        tk,
        queries: &r.queries,
        keys: &r.keys,
        query_valid: &r.query_valid,
        key_valid: &r.key_valid,
        fully_masked_rows: &r.fully_masked_rows,
        cost: r.cost(),
    })
}

fn run_layer(r: &AttentionRun, row: usize, layer: usize) -> Result<&ndarray::Array3<f32>, JsError> {
    r.weights.get(row).and_then(|layers| layers.get(layer)).ok_or_else(|| {
        JsError::new(&format!(
            "no weights for row {row}, layer {layer}: the run has {} rows of {} layers",
            r.batch(),
            r.layers()
        ))
    })
}

pub(crate) fn run_weights(r: &AttentionRun, row: usize, layer: usize) -> Result<Float32Array, JsError> {
    let w = run_layer(r, row, layer)?.as_standard_layout();
    Ok(Float32Array::from(w.as_slice().unwrap_or(&[])))
}

pub(crate) fn run_entropies(r: &AttentionRun, row: usize, layer: usize) -> Result<Float32Array, JsError> {
    let bits = crate::stats::row_entropy_bits(run_layer(r, row, layer)?.view());
    Ok(Float32Array::from(bits.as_slice().unwrap_or(&[])))
}

pub(crate) fn run_allowed(r: &AttentionRun, row: usize) -> Result<Uint8Array, JsError> {
    let mask = r
        .masks()
        .get(row)
        .ok_or_else(|| JsError::new(&format!("no mask for row {row}: the run has {} rows", r.batch())))?;
    let (_, tq, tk) = r.shape();
    let cells: Vec<u8> = match mask {
        Some(m) => m.allowed().iter().map(|&a| u8::from(a)).collect(),
        None => vec![1; tq * tk],
    };
    Ok(Uint8Array::from(&cells[..]))
}

pub(crate) fn run_pooled(
    r: &AttentionRun,
    row: usize,
    layer: usize,
    head: usize,
    height: usize,
    width: usize,
) -> Result<Float32Array, JsError> {
    let w = run_layer(r, row, layer)?;
    if head >= w.dim().0 {
        return Err(JsError::new(&format!("head {head} does not exist: there are {}", w.dim().0)));
    }
    let mask = r.masks()[row].as_ref().map(|m| m.allowed());
    let pooled = crate::stats::max_pool(w.index_axis(ndarray::Axis(0), head), mask, height, width);
    Ok(Float32Array::from(pooled.as_slice().unwrap_or(&[])))
}

/// Every step of one head as a JS object of `{ rows, cols, data: Float32Array }` matrices.
pub(crate) fn trace_object(t: &HeadTrace, row: usize, layer: usize, head: usize) -> Result<Object, JsError> {
    let obj = Object::new();
    let (tq, tk) = t.steps.weights.dim();
    set(&obj, "row", row)?;
    set(&obj, "layer", layer)?;
    set(&obj, "head", head)?;
    set(&obj, "tq", tq)?;
    set(&obj, "tk", tk)?;
    set(&obj, "dModel", t.x_q.ncols())?;
    set(&obj, "dK", t.q.ncols())?;
    set(&obj, "scale", t.steps.scale)?;
    for (name, m) in [
        ("xQ", &t.x_q),
        ("xKv", &t.x_kv),
        ("q", &t.q),
        ("k", &t.k),
        ("v", &t.v),
        ("scores", &t.steps.scores),
        ("scaled", &t.steps.scaled),
        ("masked", &t.steps.masked),
        ("weights", &t.steps.weights),
        ("output", &t.steps.output),
    ] {
        set_js(&obj, name, matrix(m)?.into())?;
    }
    Ok(obj)
}

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
struct AttentionOptions {
    causal: bool,
    key_valid: Option<Vec<bool>>,
    scale: Option<bool>,
}

/// Scaled dot-product attention on matrices given directly, every step returned like
/// [`Session::trace`]. `q` is `[Tq, d_k]`, `k` `[Tk, d_k]`, `v` `[Tk, d_v]`, row-major;
/// `options`: `{ causal?: boolean, keyValid?: boolean[], scale?: boolean }`.
#[wasm_bindgen]
pub fn attention(q: &[f32], k: &[f32], v: &[f32], d_k: usize, d_v: usize, options: JsValue) -> Result<Object, JsError> {
    let options: AttentionOptions = if options.is_undefined() || options.is_null() {
        AttentionOptions::default()
    } else {
        from_js("options", options)?
    };
    let q = matrix_from("Q", q, d_k).map_err(js_error)?; // (Tq, d_k)
    let k = matrix_from("K", k, d_k).map_err(js_error)?; // (Tk, d_k)
    let v = matrix_from("V", v, d_v).map_err(js_error)?; // (Tk, d_v)
    let (tq, tk) = (q.nrows(), k.nrows());
    let mut mask = None;
    if options.causal {
        if tq != tk {
            return Err(js_error(Error::setting("causal", format!("a causal mask needs Tq = Tk, got {tq} and {tk}"))));
        }
        mask = Some(Mask::causal(tq));
    }
    if let Some(valid) = &options.key_valid {
        if valid.len() != tk {
            return Err(js_error(Error::shape("keyValid", &[valid.len()], &[tk])));
        }
        let padding = Mask::key_padding(tq, valid);
        mask = Some(match mask {
            Some(m) => m.and(&padding).map_err(js_error)?,
            None => padding,
        });
    }
    let t =
        sdpa::trace(q.view(), k.view(), v.view(), mask.as_ref(), options.scale.unwrap_or(true)).map_err(js_error)?;
    let obj = Object::new();
    set(&obj, "tq", tq)?;
    set(&obj, "tk", tk)?;
    set(&obj, "scale", t.scale)?;
    for (name, m) in [
        ("scores", &t.scores),
        ("scaled", &t.scaled),
        ("masked", &t.masked),
        ("weights", &t.weights),
        ("output", &t.output),
    ] {
        set_js(&obj, name, matrix(m)?.into())?;
    }
    set_js(&obj, "fullyMaskedRows", to_js(&t.fully_masked_rows)?)?;
    Ok(obj)
}

/// `Σ_j weights[j] · v[j]` for `v` of shape `[weights.length, d_v]`.
#[wasm_bindgen(js_name = weightedSum)]
pub fn weighted_sum(weights: &[f32], v: &[f32], d_v: usize) -> Result<Float32Array, JsError> {
    let v = matrix_from("V", v, d_v).map_err(js_error)?;
    let sum = sdpa::weighted_sum(ArrayView1::from(weights), v.view()).map_err(js_error)?;
    Ok(Float32Array::from(sum.as_slice().unwrap_or(&[])))
}

/// The seeds' example sentences: `[{ id, lang, text, note }]`.
#[wasm_bindgen]
pub fn examples() -> Result<JsValue, JsError> {
    to_js(EXAMPLES)
}

/// Limits a page should know before it sends text: `{ maxTokens, maxBatch, pad }`.
#[wasm_bindgen]
pub fn limits() -> Result<JsValue, JsError> {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Limits {
        max_tokens: usize,
        max_batch: usize,
        pad: &'static str,
    }
    to_js(&Limits { max_tokens: MAX_TOKENS, max_batch: MAX_BATCH, pad: PAD })
}

fn matrix_from(what: &str, values: &[f32], cols: usize) -> Result<Array2<f32>> {
    if cols == 0 || values.len() % cols != 0 {
        return Err(Error::Setting {
            name: what.to_string(),
            reason: format!("{} values do not fill rows of {cols}", values.len()),
        });
    }
    Array2::from_shape_vec((values.len() / cols, cols), values.to_vec())
        .map_err(|_| Error::shape(what, &[values.len()], &[values.len() / cols, cols]))
}

/// `{ rows, cols, data: Float32Array }`, row-major.
fn matrix(m: &Array2<f32>) -> Result<Object, JsError> {
    let obj = Object::new();
    let m = m.as_standard_layout();
    set(&obj, "rows", m.nrows())?;
    set(&obj, "cols", m.ncols())?;
    set(&obj, "data", Float32Array::from(m.as_slice().unwrap_or(&[])))?;
    Ok(obj)
}

fn set(obj: &Object, key: &str, value: impl Into<JsValue>) -> Result<(), JsError> {
    set_js(obj, key, value.into())
}

fn set_js(obj: &Object, key: &str, value: JsValue) -> Result<(), JsError> {
    Reflect::set(obj, &key.into(), &value).map(|_| ()).map_err(|_| JsError::new(&format!("cannot set `{key}`")))
}

/// The benchmark workload of `benches/multi_head.rs`, for timing the same code in wasm
/// (`scripts/bench`): one self-attention block of `heads` heads over `n` random tokens.
#[wasm_bindgen]
pub struct MultiHeadBench {
    case: crate::bench::MultiHeadCase,
}

#[wasm_bindgen]
impl MultiHeadBench {
    #[wasm_bindgen(constructor)]
    pub fn new(n: usize, d_model: usize, heads: usize) -> Result<MultiHeadBench, JsError> {
        Ok(MultiHeadBench { case: crate::bench::MultiHeadCase::new(n, d_model, heads).map_err(js_error)? })
    }

    /// One forward pass; returns the first output value so the work cannot be skipped.
    pub fn run(&self) -> Result<f32, JsError> {
        let out = self.case.run().map_err(js_error)?;
        Ok(out.output.first().copied().unwrap_or(0.0))
    }
}
