//! RoBERTa (`roberta`: roberta-base, klue/roberta) and XLM-RoBERTa (`xlm-roberta`:
//! xlm-roberta-base, multilingual and Korean encoders), mirroring transformers'
//! `models/roberta/modeling_roberta.py` (XLM-R's file is the same arithmetic under other
//! names). BERT's layers and config; only the positions differ: they count from the padding
//! id, so the first token sits at row `pad_token_id + 1` of the position table and PAD tokens
//! at row `pad_token_id`.

use super::bert::BertConfig;
use crate::error::Result;
use crate::models::config::Loading;
use crate::models::encoder_only::{masked_lm_head, EncoderOnly, MaskedLmNames, Positions};
use crate::models::network::Loaded;
use crate::nn::Activation;

/// transformers' `pad_token_id` for RoBERTa and XLM-R when the config names none.
const PAD_TOKEN_ID: u32 = 1;

/// The registry's loader for `roberta` and `xlm-roberta`; checkpoints saved from a task model
/// nest the base model under `roberta.`.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let c: BertConfig = m.config()?;
    let pad = m.pad(c.vocab_size, c.pad_token_id.unwrap_or(PAD_TOKEN_ID))?;
    c.check()?;
    let prefixes = ["", "roberta.", "xlm_roberta.", "bert."];
    let w = m.weights.with_prefix_of("embeddings.word_embeddings.weight", &prefixes)?;
    let root = w.root();
    let layers = c.layers(&root)?;
    let embeddings = c.embeddings(&root, c.hidden_size, Positions::AfterPad(pad))?;
    // RobertaLMHead: dense → gelu (always the exact one) → layer_norm → the tied decoder
    let names = MaskedLmNames {
        dense: "lm_head.dense",
        norm: "lm_head.layer_norm",
        bias: &["lm_head.bias", "lm_head.decoder.bias"],
    };
    let head = masked_lm_head(&w, &names, &embeddings.word, Activation::Gelu, c.layer_norm_eps as f32)?;
    let net = EncoderOnly::new(m.model_type, c.place(), c.hidden_size, embeddings, layers, head);
    Ok(Loaded { net: Box::new(net), pad })
}
