//! ELECTRA's discriminator (`electra`: google/electra-*-discriminator, KoELECTRA), mirroring
//! transformers' `models/electra/modeling_electra.py`. BERT's layers and config; its
//! embeddings are narrower (`embedding_size` E) and, when E differs from the hidden size, an
//! `embeddings_project` layer widens them to D before the first layer.

use serde::Deserialize;

use super::bert::BertConfig;
use crate::error::Result;
use crate::models::config::{check_sizes, Loading};
use crate::models::encoder_only::{EncoderOnly, Positions};
use crate::models::network::Loaded;

/// `config.json` of an ELECTRA model: BERT's names plus `embedding_size`.
#[derive(Debug, Clone, Deserialize)]
pub struct ElectraConfig {
    #[serde(flatten)]
    pub bert: BertConfig,
    /// E, the width of the embeddings; the hidden size when absent.
    #[serde(default)]
    pub embedding_size: Option<usize>,
}

/// The registry's loader for `electra`.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let config: ElectraConfig = m.config()?;
    let c = &config.bert;
    let pad = m.pad(c.vocab_size, c.pad_token_id.unwrap_or(0))?;
    c.check()?;
    let d = c.hidden_size;
    let e = config.embedding_size.unwrap_or(d);
    check_sizes(&[("embedding_size", e)])?;
    let w = m.weights.with_prefix_of("embeddings.word_embeddings.weight", &["", "electra.", "discriminator."])?;
    let root = w.root();
    let layers = c.layers(&root)?;
    let mut embeddings = c.embeddings(&root, e, Positions::FromZero)?;
    if e != d {
        embeddings.project = Some(root.linear("embeddings_project", e, d)?);
    }
    // a discriminator tells replaced tokens apart: it has no head over the vocabulary
    let head = Err("a masked-LM head: ELECTRA's discriminator has none, and generators are not read".to_string());
    Ok(Loaded { net: Box::new(EncoderOnly::new("electra", c.place(), d, embeddings, layers, head)), pad })
}
