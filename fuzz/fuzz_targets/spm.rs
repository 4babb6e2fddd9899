//! The `.spm` (SentencePiece `ModelProto`) reader of `src/tokenize/spm.rs`: any bytes give
//! pieces or an error, and a model that parses builds a tokenizer or an error.
#![no_main]

use headmap::tokenize::spm::SpmModel;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(model) = SpmModel::parse(data, "source.spm") {
        if let Ok(tokenizer) = model.tokenizer("source.spm") {
            let _ = tokenizer.encode("동물이 길을 건너지 않았다.", false);
        }
    }
});
