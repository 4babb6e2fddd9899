//! headmap's reading of safetensors bytes (header through the `safetensors` crate, then dtype
//! conversion and shape checks of its own) as the tiny BERT: any file loads or is an error.
#![no_main]

use headmap::models::hf::ModelFiles;
use headmap::Model;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let files = ModelFiles {
        config: include_bytes!("../../tests/fixtures/hf/bert/config.json"),
        weights: data,
        tokenizer: Some(include_bytes!("../../tests/fixtures/hf/bert/tokenizer.json")),
        ..ModelFiles::default()
    };
    let _ = Model::from_files(&files);
});
