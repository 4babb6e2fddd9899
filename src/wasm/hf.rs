//! Real Hugging Face models in the browser: the files go in as bytes and come out as the same
//! `Model` the toy is (see `mod.rs`).
//!
//! ```js
//! const model = Model.fromFiles(configBytes, safetensorsBytes, tokenizerBytes);
//! model.info();   // { architecture: "bert", places: [{ place: "encoder_self", … }], maxTokens, … }
//! const run = model.run({ texts: ["동물이 길을 건너지 않았다."] });
//! run.head("encoder_self", 0, 3, 0);   // Float32Array [Tq, Tk] of row 0, layer 3, head 0
//! ```

use wasm_bindgen::prelude::*;

use super::{js_error, Model};
use crate::models::hf::ModelFiles;

#[wasm_bindgen]
impl Model {
    /// A real model from `config.json` and `model.safetensors` bytes, with `tokenizer.json`,
    /// or for Marian `source.spm` and `vocab.json`.
    #[wasm_bindgen(js_name = fromFiles)]
    pub fn from_files(
        config: &[u8],
        weights: &[u8],
        tokenizer: Option<Vec<u8>>,
        source_spm: Option<Vec<u8>>,
        vocab: Option<Vec<u8>>,
    ) -> Result<Model, JsValue> {
        let files = ModelFiles {
            config,
            weights,
            tokenizer: tokenizer.as_deref(),
            source_spm: source_spm.as_deref(),
            vocab: vocab.as_deref(),
        };
        Ok(Model { model: crate::models::Model::from_files(&files).map_err(js_error)? })
    }
}
