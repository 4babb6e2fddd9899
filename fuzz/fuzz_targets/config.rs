//! `config.json` as headmap reads it, for every family: the first byte picks a fixture whose
//! weights and tokenizer go with the fuzzed config. Loading may fail; it must not panic or
//! allocate without bound, and a model that loads must run.
#![no_main]

use headmap::models::hf::ModelFiles;
use headmap::{Model, Request};
use libfuzzer_sys::fuzz_target;

macro_rules! fixture {
    ($dir:literal) => {
        (
            include_bytes!(concat!("../../tests/fixtures/hf/", $dir, "/model.safetensors")).as_slice(),
            include_bytes!(concat!("../../tests/fixtures/hf/", $dir, "/tokenizer.json")).as_slice(),
        )
    };
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, config)) = data.split_first() else { return };
    let fixtures = [
        fixture!("bert"),
        fixture!("roberta"),
        fixture!("distilbert"),
        fixture!("electra"),
        fixture!("gpt2-inverse-layer"),
        fixture!("gpt_neo"),
        fixture!("gpt_neox"),
        fixture!("llama"),
        fixture!("qwen2"),
        fixture!("mistral"),
        fixture!("t5"),
        fixture!("bart"),
    ];
    let (weights, tokenizer) = fixtures[pick as usize % fixtures.len()];
    let files = ModelFiles { config, weights, tokenizer: Some(tokenizer), ..ModelFiles::default() };
    if let Ok(model) = Model::from_files(&files) {
        let request = Request { texts: vec!["a b c".into()], ..Request::default() };
        let _ = model.run(&request);
    }
});
