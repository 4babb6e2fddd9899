//! A decoder run one step at a time over its KV cache ([`crate::attention::multi_head::KvCache`]):
//! the prompt first, then each new token alone, every layer reading the keys and values kept of
//! the tokens before it. What generation is built on ([`super::generate`]); each step gives the
//! new rows' hidden states and their attention rows in every layer and head.

use ndarray::{Array2, Array3};

use crate::attention::mask::Mask;
use crate::attention::multi_head::KvCache;

/// How the model writes its own target, as transformers' `generate` reads the config: where it stops, what it
/// must or must not write.
#[derive(Debug, Clone, Default)]
pub(crate) struct Generation {
    pub eos: Option<u32>,
    /// The token the last step is forced to (`forced_eos_token_id`).
    pub forced_eos: Option<u32>,
    /// Tokens never chosen: the single-token `bad_words_ids` (Marian's PAD).
    pub banned: Vec<u32>,
}

/// The new rows' weights of one step, per layer (H, n, T): the decoder's self-attention over
/// every token so far, and in an encoder–decoder cross-attention over the source.
#[derive(Debug, Clone, Default)]
pub struct StepRows {
    pub decoder: Vec<Array3<f32>>,
    pub cross: Vec<Array3<f32>>,
}

/// What one step gives: the new rows' last hidden states (n, D), after the final norm, what
/// the output head reads; and their attention.
pub(crate) struct Step {
    pub hidden: Array2<f32>,
    pub rows: StepRows,
}

/// A decoder part-way through a text: every layer's caches, and in an encoder–decoder which
/// source tokens are real (cross-attention hides PAD). A network's `decode_step` runs new ids
/// at the positions after those kept.
#[derive(Debug, Clone, Default)]
pub(crate) struct DecoderState {
    pub(crate) caches: Vec<LayerCache>,
    pub(crate) source_valid: Vec<bool>,
}

impl DecoderState {
    /// Tokens read so far: the position the next one takes.
    pub fn len(&self) -> usize {
        tokens_read(&self.caches)
    }

    /// Bytes the caches hold.
    pub fn cache_bytes(&self) -> usize {
        self.caches.iter().map(LayerCache::bytes).sum()
    }
}

/// A layer's caches: its self-attention's, growing by each token, and cross-attention's over
/// the source, fixed.
#[derive(Debug, Clone, Default)]
pub(crate) struct LayerCache {
    pub own: KvCache,
    pub cross: Option<KvCache>,
}

impl LayerCache {
    pub fn bytes(&self) -> usize {
        self.own.bytes() + self.cross.as_ref().map_or(0, KvCache::bytes)
    }
}

/// Tokens a decoder's `caches` hold: the position its next token takes.
pub(crate) fn tokens_read(caches: &[LayerCache]) -> usize {
    caches.first().map_or(0, |c| c.own.len())
}

/// New rows at positions `first..first + n` over keys `0..first + n`: the causal mask's last
/// n rows, narrowed to `window` keys (the query's own included) in a windowed layer.
pub(crate) fn step_mask(first: usize, n: usize, window: Option<usize>) -> Mask {
    let allowed = Array2::from_shape_fn((n, first + n), |(i, j)| {
        let at = first + i;
        j <= at && window.is_none_or(|w| j + w > at)
    });
    Mask::from_allowed(allowed)
}
