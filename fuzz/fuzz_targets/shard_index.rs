//! A sharded checkpoint's `model.safetensors.index.json`, with the tiny Llama's four shards:
//! any index gives weights or an error naming the problem.
#![no_main]

use headmap::models::weights::{shard_names, Weights};
use libfuzzer_sys::fuzz_target;

macro_rules! shard {
    ($n:literal) => {
        (
            concat!("model-0000", $n, "-of-00004.safetensors"),
            include_bytes!(concat!("../../tests/fixtures/hf/llama-sharded/model-0000", $n, "-of-00004.safetensors")).as_slice(),
        )
    };
}

fuzz_target!(|data: &[u8]| {
    let _ = shard_names(data);
    let shards = [shard!("1"), shard!("2"), shard!("3"), shard!("4")];
    if let Ok(weights) = Weights::sharded(data, &shards) {
        let _ = weights.root().matrix("model.embed_tokens.weight", [400, 32]);
    }
});
