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

use super::{js_error, Model};
use crate::models::hf::ModelFiles;

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
