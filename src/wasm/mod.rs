//! The JavaScript face of headmap, and the only Rust module that knows about JavaScript
//! (`hf.rs` beside it adds loading real models when the `hf` feature is on, `threads.rs` the
//! threaded build's pool, `bench.rs` the benchmark workloads).
//!
//! One class pair serves every model: a [`Model`] (the toy, or a real model from its files)
//! runs requests into a [`Run`], which keeps its weights in wasm memory and hands out exactly
//! what a view draws. Results cross through serde (camelCase keys); numbers leave as owned
//! typed arrays, row-major: a head is `[Tq, Tk]`, a whole row `[L, H, Tq, Tk]`. Every failure
//! is a JS `Error` whose message a user can act on, with `code` and `details` so a page can
//! word it in the reader's language.
//!
//! ```js
//! const model = Model.toy({ preset: "small", seed: 1 });
//! const run = model.run({ texts: ["동물이 길을 건너지 않았다."], place: "decoder_self" });
//! const w = run.head("decoder_self", 0, 0, 2);   // Float32Array [Tq, Tk] of row 0, layer 0, head 2
//! const steps = run.trace("decoder_self", 0, 0, 2);          // every step of that head
//! ```

use std::rc::Rc;

use js_sys::Float32Array;
use ndarray::{Array2, ArrayView1};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[cfg(feature = "hf")]
use crate::attention::mask::Mask;
use crate::attention::mask::MaskKind;
use crate::attention::place::Place;
use crate::attention::sdpa;
use crate::error::{Error, Result};
use crate::examples::EXAMPLES;
use crate::models::toy::ToyConfig;
use crate::run::Request;

#[cfg(feature = "bench")]
mod bench;
#[cfg(feature = "hf")]
mod find;
#[cfg(feature = "hf")]
mod generate;
#[cfg(feature = "hf")]
pub mod hf;
#[cfg(feature = "hf")]
mod qk;
mod run;
#[cfg(feature = "hf")]
mod threads;
mod trace;
#[cfg(feature = "hf")]
mod train;

#[cfg(feature = "bench")]
pub use bench::{GemmBench, MultiHeadBench};
#[cfg(feature = "hf")]
pub use qk::QkCorpus;
pub use run::Run;
#[cfg(feature = "threads")]
pub use threads::{init_thread_pool, panic_on_a_thread, report_thread_panics};
#[cfg(feature = "hf")]
pub use threads::{panic_here, thread_count};
#[cfg(feature = "hf")]
use trace::StepsOut;
#[cfg(feature = "hf")]
pub use train::Trainer;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = r#"
export type Place = "encoder_self" | "decoder_self" | "cross";
export type MaskKind = "none" | "padding" | "causal" | "cross";
export interface ToySettings { preset?: "small" | "base"; seed?: number; layers?: number }
/** `ablate`: heads turned off, "L.H" from 0, comma-separated, each optionally after a place ("1.0,cross:0.3") */
export interface RunRequest {
  texts: string[]; targets?: string[]; place?: Place; mask?: MaskKind; scale?: boolean; throughLayer?: number;
  ablate?: string; ablation?: "zero" | "mean";
  /** keep the model's output, for the run's `predictions` (a model with an output head) */
  output?: boolean;
  /** the longer side, in pixels, of the thumbnails `Run.pooled` will be asked for: a run too
   * long to keep its weights pools every head to that size as its layers run */
  thumbs?: number;
}
/**
 * One attention place. `kvHeads` < `heads` in grouped-query attention: query head h shares the
 * keys and values of K/V head floor(h / (heads / kvHeads)). `windows[layer]` is how many keys a
 * local (sliding-window) layer lets a query see, itself included; null for a layer that sees
 * every key its mask allows (GPT-Neo's local layers, Mistral, some Qwen2 layers are windowed).
 */
export interface PlaceInfo {
  place: Place; mask: MaskKind; layers: number; heads: number; kvHeads: number; dK: number;
  windows: (number | null)[];
  /** the masks this place can run with: its own and the what-ifs the core accepts */
  masks: MaskKind[];
}
export interface ModelInfo {
  architecture: string; trained: boolean; places: PlaceInfo[]; encoderDecoder: boolean;
  canGenerate: boolean; maxTokens: number; maxBatch: number; dModel: number;
}
export interface Cost { scoreMacs: number; flops: number; weightBytes: number }
export interface Token {
  label: string; piece: string; kind: "word" | "continuation" | "part" | "special" | "unknown" | "pad";
  text: string; part?: [number, number];
}
export interface PlaceSummary {
  place: Place; mask: MaskKind; whatIf: boolean; scale: boolean; batch: number;
  layers: number; heads: number; tq: number; tk: number; cost: Cost;
}
export interface RunInfo { places: PlaceSummary[]; modelType: string; fromFile: boolean }
export interface RowTokens {
  queries: Token[]; keys: Token[]; queryValid: boolean[]; keyValid: boolean[];
  /** how much of the text the model read, per side: shares of its tokens (special aside) */
  coverage: { queries: Coverage; keys: Coverage };
}
/** `unknown`: [UNK] or pieces of one character; `letters`: words spelled out letter by letter */
export interface Coverage { tokens: number; unknown: number; letters: number; read: number }
/** one head as a view draws it: weights and mask [Tq, Tk], this head's entropies and their limits [Tq], maxima [L, H] */
export interface HeadView {
  weights: Float32Array; allowed: Uint8Array; entropies: Float32Array; entropyLimits: Float32Array; maxima: Float32Array;
}
/** what every head of one layer writes: ‖z_hi W_O^h‖ [H, Tq], and each head's share of the layer's write at each query [H, Tq] */
export interface HeadWrites { norms: Float32Array; shares: Float32Array }
export interface RowWeights extends RowTokens {
  /** [L, H, Tq, Tk] */ weights: Float32Array; /** [L, Tq, Tk], 1 where allowed */ allowed: Uint8Array;
  /** [L, H] */ maxima: Float32Array;
}
export interface Matrix { rows: number; cols: number; data: Float32Array }
/**
 * Every step of one head. `scale` is what the scores were divided by: √dK, 1 where the model does
 * not scale (T5, GPT-Neo) or scaling is off, √dK·(layer+1) for GPT-2's inverse-layer variant.
 * Rotary models add `qRotated`/`kRotated` (Q and K turned by position; the scores use them);
 * T5 adds `positionBias` (its relative position bias for this head) and `biased` = scaled + bias,
 * which `masked` starts from. `kvHead` is the key/value head this query head reads.
 */
export interface HeadTrace {
  row: number; layer: number; head: number; kvHead: number; tq: number; tk: number; dModel: number; dK: number;
  scale: number; xQ: Matrix; xKv: Matrix; q: Matrix; k: Matrix; v: Matrix; qRotated?: Matrix; kRotated?: Matrix;
  scores: Matrix; scaled: Matrix; positionBias?: Matrix; biased?: Matrix; masked: Matrix; weights: Matrix;
  output: Matrix; fullyMaskedRows: number[];
}
export interface Example { id: string; lang: string; text: string; note: { en: string; ko: string } }
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "ToySettings | undefined")]
    pub type ToySettingsJs;
    #[wasm_bindgen(typescript_type = "RunRequest")]
    pub type RunRequestJs;
    #[wasm_bindgen(typescript_type = "ModelInfo")]
    pub type ModelInfoJs;
    #[wasm_bindgen(typescript_type = "RunInfo")]
    pub type RunInfoJs;
    #[wasm_bindgen(typescript_type = "RowTokens")]
    pub type RowTokensJs;
    #[wasm_bindgen(typescript_type = "RowWeights")]
    pub type RowWeightsJs;
    #[wasm_bindgen(typescript_type = "HeadView")]
    pub type ViewJs;
    #[wasm_bindgen(typescript_type = "HeadWrites")]
    pub type HeadWritesJs;
    #[wasm_bindgen(typescript_type = "HeadTrace")]
    pub type HeadTraceJs;
    #[wasm_bindgen(typescript_type = "Example[]")]
    pub type ExamplesJs;
    #[wasm_bindgen(
        typescript_type = "{ weights: Matrix; output: Matrix; scores: Matrix; scaled: Matrix; masked: Matrix; scale: number; fullyMaskedRows: number[] }"
    )]
    pub type AttentionJs;
    #[wasm_bindgen(typescript_type = "{ causal?: boolean; keyValid?: boolean[]; scale?: boolean } | undefined")]
    pub type AttentionOptionsJs;
}

#[wasm_bindgen(start)]
pub fn start() {
    // A panic that slips through shows its message in the console instead of "unreachable".
    console_error_panic_hook::set_once();
}

/// A JS `Error` with the message, and `code` and `details` (the error's named values).
pub(crate) fn js_error(e: Error) -> JsValue {
    let error = js_sys::Error::new(&e.to_string());
    if let Ok(details) = to_js(&e) {
        let code = js_sys::Reflect::get(&details, &"code".into()).unwrap_or(JsValue::UNDEFINED);
        let _ = js_sys::Reflect::set(&error, &"code".into(), &code);
        let _ = js_sys::Reflect::set(&error, &"details".into(), &details);
    }
    error.into()
}

/// A request object that does not deserialize: a programming mistake on the page's side.
pub(crate) fn from_js<T: for<'de> Deserialize<'de>>(what: &str, value: JsValue) -> Result<T, JsValue> {
    serde_wasm_bindgen::from_value(value).map_err(|e| js_sys::Error::new(&format!("invalid {what}: {e}")).into())
}

pub(crate) fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsValue> {
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    value
        .serialize(&serializer)
        .map_err(|e| js_sys::Error::new(&format!("cannot pass a result to JavaScript: {e}")).into())
}

fn typed<T: Serialize + ?Sized, J: JsCast>(value: &T) -> Result<J, JsValue> {
    Ok(to_js(value)?.unchecked_into())
}

fn place(name: &str) -> Result<Place, JsValue> {
    Place::parse(name).map_err(js_error)
}

#[derive(Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
struct ToySettings {
    preset: Option<String>,
    seed: Option<u64>,
    /// Sets both the encoder's and the decoder's number of layers.
    layers: Option<usize>,
}

/// A model in memory — the toy, or a real one from its files — ready to run texts.
#[wasm_bindgen]
pub struct Model {
    /// Shared with every run it makes, so a run outlives a model the page has freed.
    pub(crate) model: Rc<crate::models::Model>,
}

#[wasm_bindgen]
impl Model {
    /// The untrained toy Transformer: `{ preset?: "small" | "base", seed?, layers? }`;
    /// `undefined` gives the small preset with seed 1.
    pub fn toy(settings: ToySettingsJs) -> Result<Model, JsValue> {
        let settings: JsValue = settings.into();
        let settings: ToySettings = if settings.is_undefined() || settings.is_null() {
            ToySettings::default()
        } else {
            from_js("settings", settings)?
        };
        let mut config = ToyConfig::preset(settings.preset.as_deref().unwrap_or("small"), settings.seed.unwrap_or(1))
            .map_err(js_error)?;
        if let Some(layers) = settings.layers {
            config.encoder_layers = layers;
            config.decoder_layers = layers;
        }
        Ok(Model { model: Rc::new(crate::models::Model::toy(config).map_err(js_error)?) })
    }

    /// What the model is: `{ architecture, trained, places: [{ place, mask, masks, layers,
    /// heads, kvHeads, dK, windows }], encoderDecoder, canGenerate, maxTokens, maxBatch, dModel }`;
    /// `masks` are those a place can run with (its own first), so a page need not know them.
    pub fn info(&self) -> Result<ModelInfoJs, JsValue> {
        let info = to_js(self.model.info())?;
        let places = js_sys::Reflect::get(&info, &"places".into())?;
        for (entry, p) in js_sys::Array::from(&places).iter().zip(&self.model.info().places) {
            let own = std::iter::once(p.mask);
            let masks: Vec<MaskKind> = own.chain(p.place.masks().iter().copied().filter(|&m| m != p.mask)).collect();
            js_sys::Reflect::set(&entry, &"masks".into(), &to_js(&masks)?)?;
        }
        Ok(info.unchecked_into())
    }

    /// `request`: `{ texts, targets?, place?, mask?, scale?, ablate?, ablation? }`. Texts form
    /// a padded batch; targets feed an encoder–decoder's decoder (default: the texts); `place`
    /// keeps one place (default: all), `mask` runs it with another mask than it was trained
    /// with (a what-if); `ablate` turns heads off (zeros, or their mean with `ablation: "mean"`)
    /// and every later layer is computed without them.
    /// The page draws weights and never reads the last hidden states, so a stack nothing else
    /// reads stops at its last layer's weights ([`crate::Model::run_weights`]).
    pub fn run(&self, request: RunRequestJs) -> Result<Run, JsValue> {
        let request: Request = from_js("request", request.into())?;
        let run = self.model.run_weights(&request).map_err(js_error)?;
        Ok(Run { run, model: Some(Rc::clone(&self.model)), model_type: self.model.info().architecture.clone() })
    }

    /// An encoder–decoder model's greedy output for `text`, at most `max_new_tokens` long:
    /// the decoded text, to use as the target.
    pub fn generate(&self, text: &str, max_new_tokens: usize) -> Result<String, JsValue> {
        self.model.generate(text, max_new_tokens).map(|g| g.text).map_err(js_error)
    }
}

#[cfg(feature = "hf")]
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
struct AttentionOptions {
    causal: bool,
    key_valid: Option<Vec<bool>>,
    scale: Option<bool>,
}

/// Scaled dot-product attention on matrices given directly, every step returned like
/// `Model.trace`. `q` is `[Tq, d_k]`, `k` `[Tk, d_k]`, `v` `[Tk, d_v]`, row-major;
/// `options`: `{ causal?: boolean, keyValid?: boolean[], scale?: boolean }`. No page calls it,
/// so the toy-only package, a widget's download, leaves it to the one with real models.
#[cfg(feature = "hf")]
#[wasm_bindgen]
pub fn attention(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    d_k: usize,
    d_v: usize,
    options: AttentionOptionsJs,
) -> Result<AttentionJs, JsValue> {
    let options: JsValue = options.into();
    let options: AttentionOptions = if options.is_undefined() || options.is_null() {
        AttentionOptions::default()
    } else {
        from_js("options", options)?
    };
    let q = matrix_from("Q", q, d_k).map_err(js_error)?; // (Tq, d_k)
    let k = matrix_from("K", k, d_k).map_err(js_error)?; // (Tk, d_k)
    let v = matrix_from("V", v, d_v).map_err(js_error)?; // (Tk, d_v)
    let (tq, tk) = (q.nrows(), k.nrows());
    let query_valid = vec![true; tq];
    let key_valid = options.key_valid.unwrap_or_else(|| vec![true; tk]);
    if key_valid.len() != tk {
        return Err(js_error(Error::shape("keyValid", &[key_valid.len()], &[tk])));
    }
    let mask: Mask = if options.causal { MaskKind::Causal } else { MaskKind::Padding }
        .build(&query_valid, &key_valid)
        .map_err(js_error)?;
    let t = sdpa::trace(q.view(), k.view(), v.view(), Some(&mask), options.scale.unwrap_or(true)).map_err(js_error)?;
    typed(&StepsOut::of(&t))
}

/// `Σ_j weights[j] · v[j]` for `v` of shape `[weights.length, d_v]`.
#[wasm_bindgen(js_name = weightedSum)]
pub fn weighted_sum(weights: &[f32], v: &[f32], d_v: usize) -> Result<Float32Array, JsValue> {
    let v = matrix_from("V", v, d_v).map_err(js_error)?;
    let sum = sdpa::weighted_sum(ArrayView1::from(weights), v.view()).map_err(js_error)?;
    Ok(Float32Array::from(sum.as_slice().unwrap_or(&[])))
}

/// The seeds' example sentences: `[{ id, lang, text, note }]`.
#[wasm_bindgen]
pub fn examples() -> Result<ExamplesJs, JsValue> {
    typed(EXAMPLES)
}

fn matrix_from(what: &str, values: &[f32], cols: usize) -> Result<Array2<f32>> {
    let ragged = || Error::Ragged { what: what.to_string(), values: values.len(), cols };
    if cols == 0 || values.len() % cols != 0 {
        return Err(ragged());
    }
    Array2::from_shape_vec((values.len() / cols, cols), values.to_vec()).map_err(|_| ragged())
}

/// Talc instead of the standard library's dlmalloc: 7 KB smaller (a widget's budget is 150 KB)
/// and faster at the large, short-lived buffers a run allocates. Talc's wasm allocator takes
/// no lock: the threaded build keeps the standard library's, which does.
#[cfg(not(target_feature = "atomics"))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
