//! Real Hugging Face models in the browser: the files go in as bytes and come out as the same
//! `Model` the toy is (see `mod.rs`).
//!
//! ```js
//! const model = Model.fromFiles(configBytes, safetensorsBytes, tokenizerBytes);
//! model.info();   // { architecture: "bert", places: [{ place: "encoder_self", … }], maxTokens, … }
//! const run = model.run({ texts: ["동물이 길을 건너지 않았다."] });
//! run.head("encoder_self", 0, 3, 0);   // Float32Array [Tq, Tk] of row 0, layer 3, head 0
//!
//! // a sharded checkpoint: no model.safetensors, its index and every shard it names
//! Model.fromFiles(configBytes, new Uint8Array(), tokenizerBytes, undefined, undefined,
//!   [{ name: "model-00001-of-00002.safetensors", bytes }, …], indexBytes);
//! ```

use js_sys::{Array, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::{js_error, Model, Run};
use crate::error::Error;
use crate::models::hf::ModelFiles;
use crate::models::patch::PatchRequest;
use crate::models::predict::PredictOptions;
use crate::run::{Ablation, Request};

/// `[{ name, bytes }]` as names and bytes copied into wasm memory.
fn shards_from(shards: &Array) -> Result<Vec<(String, Vec<u8>)>, JsValue> {
    let invalid = |i: u32| -> JsValue {
        js_sys::Error::new(&format!("invalid shard {i}: give {{ name: string, bytes: Uint8Array }}")).into()
    };
    shards
        .iter()
        .enumerate()
        .map(|(i, shard)| {
            let i = i as u32;
            let name =
                Reflect::get(&shard, &"name".into()).ok().and_then(|n| n.as_string()).ok_or_else(|| invalid(i))?;
            let bytes = Reflect::get(&shard, &"bytes".into()).map_err(|_| invalid(i))?;
            let bytes = bytes.dyn_into::<Uint8Array>().map_err(|_| invalid(i))?;
            Ok((name, bytes.to_vec()))
        })
        .collect()
}

#[wasm_bindgen]
impl Model {
    /// A real model from `config.json` and `model.safetensors` bytes, with `tokenizer.json`,
    /// or for Marian `source.spm` and `vocab.json`. A sharded checkpoint passes an empty
    /// `weights`, its shards as `[{ name, bytes }]` (names as the index writes them) and the
    /// bytes of `model.safetensors.index.json`.
    #[wasm_bindgen(js_name = fromFiles)]
    #[allow(clippy::too_many_arguments)]
    pub fn from_files(
        config: &[u8],
        weights: &[u8],
        tokenizer: Option<Vec<u8>>,
        source_spm: Option<Vec<u8>>,
        vocab: Option<Vec<u8>>,
        #[wasm_bindgen(unchecked_param_type = "{ name: string; bytes: Uint8Array }[] | undefined")] shards: Option<
            Array,
        >,
        index: Option<Vec<u8>>,
    ) -> Result<Model, JsValue> {
        let shards = match &shards {
            Some(list) => shards_from(list)?,
            None => Vec::new(),
        };
        let files = ModelFiles {
            config,
            weights,
            tokenizer: tokenizer.as_deref(),
            source_spm: source_spm.as_deref(),
            vocab: vocab.as_deref(),
            index: index.as_deref(),
            shards: shards.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect(),
        };
        Ok(Model { model: std::rc::Rc::new(crate::models::Model::from_files(&files).map_err(js_error)?) })
    }
}

#[wasm_bindgen(typescript_custom_section)]
const PREDICT_TYPES: &str = r#"
/** what `Model.predict` is asked: the run's texts, and `lens` true for every position or a position */
export interface PredictRequest {
  texts: string[]; targets?: string[]; topK?: number; lens?: boolean | number;
  ablate?: string; ablation?: "zero" | "mean";
}
export interface Candidate { id: number; token: string; p: number }
/** the document `headmap predict` writes: per row the tokens, per position the top k (null at PAD),
 * and with the lens per layer and position the top token and `p_final`, the probability it gives
 * the last layer's top token (null where not asked) */
export interface Predictions {
  format: "headmap.predictions"; version: 1; model_type: string; ablated: string[]; ablation: "zero" | "mean";
  rows: { tokens: string[]; predictions: (Candidate[] | null)[]; lens?: ((Candidate & { p_final: number }) | null)[][] }[];
}
export interface PatchRequest {
  clean: string; corrupt: string; target?: string; answer: string; wrong: string; position?: number; place?: Place;
}
/** the document `headmap patch` writes; `map[layer][head]` is (patched − corrupt) / (clean − corrupt) */
export interface Patching {
  format: "headmap.patching"; version: 1; model_type: string; place: Place; tokens: string[]; position: number;
  answer: Candidate; wrong: Candidate; clean_diff: number; corrupt_diff: number; map: number[][];
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "PredictRequest")]
    pub type PredictRequestJs;
    #[wasm_bindgen(typescript_type = "Predictions")]
    pub type PredictionsJs;
    #[wasm_bindgen(typescript_type = "PatchRequest")]
    pub type PatchRequestJs;
    #[wasm_bindgen(typescript_type = "Patching")]
    pub type PatchingJs;
}

/// `lens`: off, every position, or one.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum LensAt {
    All(bool),
    Position(usize),
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PredictRequest {
    texts: Vec<String>,
    #[serde(default)]
    targets: Vec<String>,
    top_k: Option<usize>,
    lens: Option<LensAt>,
    ablate: Option<String>,
    #[serde(default)]
    ablation: Ablation,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PatchRequestIn {
    clean: String,
    corrupt: String,
    target: Option<String>,
    answer: String,
    wrong: String,
    position: Option<usize>,
    place: Option<crate::attention::place::Place>,
}

/// The most tokens a position lists: more is a page's mistake, not a reader's wish.
const MAX_TOP_K: usize = 1000;

#[wasm_bindgen]
impl Model {
    /// What the model predicts at every position of every text (the next token; a masked LM's
    /// token at a position): `{ texts, targets?, topK? (5), lens?, ablate?, ablation? }` gives
    /// the document `headmap predict` writes. Fails with `no_output_head` for a model whose
    /// files carry none.
    pub fn predict(&self, request: PredictRequestJs) -> Result<PredictionsJs, JsValue> {
        let r: PredictRequest = super::from_js("request", request.into())?;
        let request = Request { texts: r.texts, targets: r.targets, ..Request::default() };
        let ablate = match &r.ablate {
            Some(spec) => self.model.heads(spec).map_err(js_error)?,
            None => Vec::new(),
        };
        let top_k = r.top_k.unwrap_or(5);
        if top_k == 0 || top_k > MAX_TOP_K {
            return Err(js_error(Error::OutOfRange { setting: "topK".into(), value: top_k, min: 1, max: MAX_TOP_K }));
        }
        let lens = match r.lens {
            None | Some(LensAt::All(false)) => None,
            Some(LensAt::All(true)) => Some(None),
            Some(LensAt::Position(p)) => Some(Some(p)),
        };
        let options = PredictOptions { top_k, lens, ablate, ablation: r.ablation };
        super::typed(&self.model.predict(&request, &options).map_err(js_error)?)
    }

    /// Activation patching of every head, one head per `step()`, so a page can show progress
    /// and stop: `{ clean, corrupt, target?, answer, wrong, position?, place? }`.
    pub fn patcher(&self, request: PatchRequestJs) -> Result<Patcher, JsValue> {
        let r: PatchRequestIn = super::from_js("request", request.into())?;
        let request = PatchRequest {
            clean: r.clean,
            corrupt: r.corrupt,
            target: r.target,
            answer: r.answer,
            wrong: r.wrong,
            position: r.position,
            place: r.place,
        };
        let patcher = crate::models::patch::Patcher::new(&self.model, &request).map_err(js_error)?;
        Ok(Patcher { patcher, model: std::rc::Rc::clone(&self.model) })
    }
}

/// Activation patching under way: `step()` patches the next head, `result()` the map so far.
#[wasm_bindgen]
pub struct Patcher {
    patcher: crate::models::patch::Patcher,
    model: std::rc::Rc<crate::models::Model>,
}

#[wasm_bindgen]
impl Patcher {
    /// Patches the next `count` heads, as many at once as the build has threads; false once
    /// every head is done.
    pub fn step(&mut self, count: usize) -> Result<bool, JsValue> {
        let (mut left, threads) = (count.max(1), crate::par::threads());
        while left > 0 {
            match self.patcher.step_heads(&self.model, left.min(threads)).map_err(js_error)? {
                0 => return Ok(false),
                done => left = left.saturating_sub(done),
            }
        }
        Ok(self.patcher.done() < self.patcher.total())
    }

    pub fn done(&self) -> usize {
        self.patcher.done()
    }

    pub fn total(&self) -> usize {
        self.patcher.total()
    }

    /// The document `headmap patch` writes, heads not yet patched at 0.
    pub fn result(&self) -> Result<PatchingJs, JsValue> {
        super::typed(&self.patcher.result)
    }
}

#[wasm_bindgen]
impl Run {
    /// What the model predicts at every position of batch row `row`, `topK` each, read from the
    /// output this run kept (asked with `output: true` of a model with an output head) instead
    /// of running the model again: the document `predict` gives for that row's text with the
    /// run's heads off, the row's padding left out.
    pub fn predictions(&self, row: usize, top_k: usize) -> Result<PredictionsJs, JsValue> {
        if top_k == 0 || top_k > MAX_TOP_K {
            return Err(js_error(Error::OutOfRange { setting: "topK".into(), value: top_k, min: 1, max: MAX_TOP_K }));
        }
        let model = self.model.as_ref().ok_or_else(|| js_error(Error::NeedsModel))?;
        let mut doc = model.predictions_of(&self.run, Some(row), top_k).map_err(js_error)?;
        for kept in &mut doc.rows {
            let real = kept.predictions.iter().rposition(Option::is_some).map_or(0, |at| at + 1);
            kept.tokens.truncate(real);
            kept.predictions.truncate(real);
        }
        super::typed(&doc)
    }
}
