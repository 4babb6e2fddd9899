//! What every network is to [`super::Model`]: a description fixed at load ([`NetworkInfo`])
//! and a forward pass over a padded batch ([`Network`]). The toy implements it, and the three
//! shapes every Hugging Face family is read into (`encoder_only`, `decoder_only`,
//! `encoder_decoder`); [`Loaded`] is what a family's loader gives the registry.

use std::sync::Arc;

use crate::attention::mask::{Mask, MaskKind};
use crate::error::{Error, Result};
use crate::run::{Batch, PlaceInfo, Row, Run, Settings};

/// What a network is, fixed when it is built: what [`crate::run::ModelInfo`] is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NetworkInfo {
    /// "toy", or a real model's `model_type`.
    pub architecture: String,
    /// The places the network uses attention, in the order of the seeds' table.
    pub places: Vec<PlaceInfo>,
    pub d_model: usize,
    /// The most tokens one row may have.
    pub max_tokens: usize,
    /// For an encoder–decoder model fed like transformers feeds labels: the decoder's start
    /// token id. `None` feeds the target as it is (the toy model), or there is no decoder.
    pub decoder_start: Option<u32>,
}

/// What a network does: run token rows, recording the attention block behind each place and
/// layer (for weights on demand and traces), and, in an encoder–decoder, write its own target.
pub(crate) trait Network: Send + Sync {
    fn info(&self) -> &NetworkInfo;
    /// Runs a padded batch; keeps the places `settings` asks for, each layer recorded with
    /// its block and inputs (see [`crate::run::attend`]) so its weights and traces can be
    /// given again.
    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run>;
    /// Greedy decoding of `source`, up to `max_new_tokens`: the decoder's ids, start token first.
    fn greedy(&self, _source: &Row, _max_new_tokens: usize) -> Result<Vec<u32>> {
        Err(Error::CannotGenerate { architecture: self.info().architecture.clone() })
    }
}

/// A loaded Hugging Face network and the id its batches are padded with.
#[cfg(feature = "hf")]
pub(crate) struct Loaded {
    pub net: Box<dyn Network>,
    pub pad: u32,
}

/// The mask of kind `mask` over rows `queries` × `keys`, shared by every layer.
pub(crate) fn place_mask(mask: MaskKind, queries: &Row, keys: &Row) -> Result<Arc<Mask>> {
    Ok(Arc::new(mask.build(&queries.valid, &keys.valid)?))
}
