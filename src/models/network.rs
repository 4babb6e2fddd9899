//! What every network is to [`super::Model`]: the [`Network`] trait the toy and every Hugging
//! Face family implement, and [`Loaded`], what a family's loader gives the registry.

use std::sync::Arc;

use super::run::{Batch, PlaceInfo, Row, Run, Settings};
use crate::attention::mask::{Mask, MaskKind};
use crate::error::{Error, Result};

/// What a family of models implements: run token rows, and give the attention block behind a
/// place and layer (for traces).
pub(crate) trait Network {
    /// "toy", or a real model's `model_type`.
    fn architecture(&self) -> &str;
    /// The places the network uses attention, in the order of the seeds' table.
    fn places(&self) -> Vec<PlaceInfo>;
    fn d_model(&self) -> usize;
    /// The most tokens one row may have.
    fn max_tokens(&self) -> usize;
    /// Runs a padded batch; keeps the places `settings` asks for, each layer recorded with
    /// its block and inputs (see [`super::run::attend`]) so its weights and traces can be given again.
    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run>;
    /// For an encoder–decoder model fed like transformers feeds labels: the decoder's start
    /// token id. `None` feeds the target as it is (the toy model).
    fn decoder_start(&self) -> Option<u32> {
        None
    }
    /// Greedy decoding of `source`, up to `max_new_tokens`: the decoder's ids, start token first.
    fn greedy(&self, _source: &Row, _max_new_tokens: usize) -> Result<Vec<u32>> {
        Err(Error::CannotGenerate { architecture: self.architecture().to_string() })
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
