//! Real Hugging Face models in the browser: the files go in as bytes, the attention of every
//! place the model has comes out like the toy model's (see `Run`).
//!
//! ```js
//! const model = new ModelSession(configBytes, safetensorsBytes, tokenizerBytes);
//! model.info();   // { modelType, kinds: ["padding"], layers, heads, dModel, maxTokens }
//! const run = model.run({ texts: ["동물이 길을 건너지 않았다."] });
//! run.weights("padding", 0, 3);   // Float32Array [H, Tq, Tk] of row 0, layer 3
//! ```

use js_sys::{Float32Array, Object, Uint8Array};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use super::{from_js, js_error, run_allowed, run_entropies, run_meta, run_pooled, run_weights, to_js, trace_object};
use crate::attention::mask::MaskKind;
use crate::models::hf::{HfModel, HfRun, ModelFiles};
use crate::models::run::AttentionRun;

/// A loaded real model with its tokenizer.
#[wasm_bindgen]
pub struct ModelSession {
    model: HfModel,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[serde(rename_all = "camelCase")]
struct ModelRequest {
    texts: Vec<String>,
    #[serde(default)]
    targets: Vec<String>,
    /// A self-attention mask the model was not trained with: "none", "padding" or "causal".
    what_if: Option<String>,
}

#[wasm_bindgen]
impl ModelSession {
    /// `config.json` and `model.safetensors` bytes, with `tokenizer.json`, or for Marian
    /// `source.spm` and `vocab.json`.
    #[wasm_bindgen(constructor)]
    pub fn new(
        config: &[u8],
        weights: &[u8],
        tokenizer: Option<Vec<u8>>,
        source_spm: Option<Vec<u8>>,
        vocab: Option<Vec<u8>>,
    ) -> Result<ModelSession, JsError> {
        let files = ModelFiles {
            config,
            weights,
            tokenizer: tokenizer.as_deref(),
            source_spm: source_spm.as_deref(),
            vocab: vocab.as_deref(),
        };
        Ok(ModelSession { model: HfModel::load(&files).map_err(js_error)? })
    }

    /// `{ modelType, kinds, encoderDecoder, maxTokens }`: `kinds` lists the places the model
    /// uses attention, as mask names ("padding", "causal", "cross").
    pub fn info(&self) -> Result<JsValue, JsError> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Info<'a> {
            model_type: &'a str,
            kinds: Vec<MaskKind>,
            encoder_decoder: bool,
            max_tokens: usize,
        }
        to_js(&Info {
            model_type: &self.model.model_type,
            kinds: self.model.kinds(),
            encoder_decoder: self.model.is_encoder_decoder(),
            max_tokens: self.model.max_tokens(),
        })
    }

    /// `request`: `{ texts: string[], targets?: string[], whatIf?: "none" | "padding" |
    /// "causal" }`; targets feed an encoder–decoder model's decoder (teacher forcing) and
    /// default to the texts; `whatIf` runs an encoder-only or decoder-only model with a mask
    /// it was not trained with.
    pub fn run(&self, request: JsValue) -> Result<ModelRun, JsError> {
        let request: ModelRequest = from_js("request", request)?;
        let texts: Vec<&str> = request.texts.iter().map(String::as_str).collect();
        let targets: Vec<&str> = request.targets.iter().map(String::as_str).collect();
        let what_if = request.what_if.as_deref().map(MaskKind::parse).transpose().map_err(js_error)?;
        Ok(ModelRun { run: self.model.run_what_if(&texts, &targets, what_if).map_err(js_error)? })
    }

    /// An encoder–decoder model's greedy output for `text`, at most `max_new_tokens` long:
    /// the decoded text, to use as the target.
    pub fn generate(&self, text: &str, max_new_tokens: usize) -> Result<String, JsError> {
        self.model.generate(text, max_new_tokens).map(|(_, text)| text).map_err(js_error)
    }

    /// Every step of one head at the place `kind` of `run`.
    pub fn trace(&self, run: &ModelRun, kind: &str, row: usize, layer: usize, head: usize) -> Result<Object, JsError> {
        let place = run.place(kind)?;
        let t = self.model.trace(place, row, layer, head).map_err(js_error)?;
        trace_object(&t, row, layer, head)
    }
}

/// Every attention place of one real-model run, kept in wasm memory until asked for.
#[wasm_bindgen]
pub struct ModelRun {
    run: HfRun,
}

#[wasm_bindgen]
impl ModelRun {
    /// Like `Run.meta()`, for the place `kind`.
    pub fn meta(&self, kind: &str) -> Result<JsValue, JsError> {
        run_meta(self.place(kind)?)
    }

    /// `Float32Array` `[H, Tq, Tk]` of the place `kind`, batch row `row`, layer `layer`.
    pub fn weights(&self, kind: &str, row: usize, layer: usize) -> Result<Float32Array, JsError> {
        run_weights(self.place(kind)?, row, layer)
    }

    /// `Float32Array` `[H, Tq]` of row entropies in bits.
    pub fn entropies(&self, kind: &str, row: usize, layer: usize) -> Result<Float32Array, JsError> {
        run_entropies(self.place(kind)?, row, layer)
    }

    /// `Uint8Array` `[Tq, Tk]`: 1 where the mask lets query i see key j.
    pub fn allowed(&self, kind: &str, row: usize) -> Result<Uint8Array, JsError> {
        run_allowed(self.place(kind)?, row)
    }

    /// One head max-pooled to `[height, width]` pixels for drawing (-1 where all is masked).
    pub fn pooled(
        &self,
        kind: &str,
        row: usize,
        layer: usize,
        head: usize,
        height: usize,
        width: usize,
    ) -> Result<Float32Array, JsError> {
        run_pooled(self.place(kind)?, row, layer, head, height, width)
    }
}

impl ModelRun {
    fn place(&self, kind: &str) -> Result<&AttentionRun, JsError> {
        let kind = MaskKind::parse(kind).map_err(js_error)?;
        self.run.place(kind).ok_or_else(|| {
            let have: Vec<&str> = self.run.places.iter().map(|p| p.kind.name()).collect();
            JsError::new(&format!("this model has no {} attention; it has {}", kind.name(), have.join(", ")))
        })
    }
}
