//! What every network is to [`super::Model`]: a description fixed at load ([`NetworkInfo`])
//! and a forward pass over a padded batch ([`Network`]). The toy implements it, and the three
//! shapes every Hugging Face family is read into (`encoder_only`, `decoder_only`,
//! `encoder_decoder`); [`Loaded`] is what a family's loader gives the registry.

use std::sync::Arc;

use ndarray::Array2;
#[cfg(feature = "hf")]
use ndarray::ArrayView2;

#[cfg(feature = "hf")]
use super::decoding::{DecoderState, Generation, Step};
#[cfg(feature = "hf")]
use super::head::OutputHead;
#[cfg(feature = "hf")]
use crate::nn::Norm;

use crate::attention::mask::{Mask, MaskKind};
#[cfg(feature = "hf")]
use crate::error::Error;
use crate::error::Result;
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
    /// What turns the last hidden states into scores over the vocabulary, when the network
    /// has one (every real model; the head itself only when its files carry it).
    #[cfg(feature = "hf")]
    fn unembed(&self) -> Option<&Unembed> {
        None
    }
    /// How the model ends what it writes (its EOS, forced and banned tokens).
    #[cfg(feature = "hf")]
    fn generation(&self) -> Generation {
        Generation::default()
    }
    /// A decoder ready to run a text one step at a time over its KV cache: a decoder-only
    /// model's, or an encoder–decoder's over `source`, encoded once.
    #[cfg(feature = "hf")]
    fn start_decoding(&self, _source: Option<&Row>, _settings: &Settings) -> Result<DecoderState> {
        Err(Error::CannotGenerate { architecture: self.info().architecture.clone() })
    }
    /// Runs the decoder's new `ids` at the positions after those `state` keeps, keeping theirs.
    #[cfg(feature = "hf")]
    fn decode_step(&self, _state: &mut DecoderState, _ids: &[u32], _settings: &Settings) -> Result<Step> {
        Err(Error::CannotGenerate { architecture: self.info().architecture.clone() })
    }
}

/// What reads the residual stream at the end of a model: the stack's final norm, where it
/// has one (the pre-norm stacks; post-LN layers end normalised), then the output head.
#[cfg(feature = "hf")]
pub(crate) struct Unembed {
    pub final_norm: Option<Norm>,
    /// The head, or what the files lack for one (said in the error).
    pub head: std::result::Result<OutputHead, String>,
}

#[cfg(feature = "hf")]
impl Unembed {
    /// A stack's final norm and `head`.
    pub fn new(final_norm: Option<Norm>, head: std::result::Result<OutputHead, String>) -> Self {
        Unembed { final_norm, head }
    }

    /// The head, or an error naming what `architecture`'s files lack.
    pub fn head(&self, architecture: &str) -> Result<&OutputHead> {
        self.head
            .as_ref()
            .map_err(|missing| Error::NoOutputHead { architecture: architecture.to_string(), missing: missing.clone() })
    }

    /// The logits of a residual stream taken after some layer (T, D): through the final norm
    /// and the head, as the last layer's is to make the model's output (the logit lens).
    pub fn lens(&self, architecture: &str, residual: ArrayView2<f32>) -> Result<Array2<f32>> {
        let head = self.head(architecture)?;
        match &self.final_norm {
            Some(norm) => head.logits(norm.forward(residual).view()),
            None => head.logits(residual),
        }
    }
}

/// What a stack of layers gives: its output (T, D), or none when it ran only until a layer's
/// weights, and, when the settings ask, the residual stream after each layer it ran.
#[derive(Debug, Clone, Default)]
pub(crate) struct Stacked {
    pub output: Option<Array2<f32>>,
    pub residuals: Vec<Array2<f32>>,
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
