//! What a model is asked: a [`Request`] of texts, and what a network runs — padded [`Row`]s
//! in a [`Batch`], with [`Settings`] that say which places to keep, how far each stack runs
//! ([`Until`]) and where the weights live ([`Store`]).

use std::sync::Arc;

use ndarray::Array2;
use serde::Deserialize;

#[cfg(feature = "hf")]
use super::edits::Ablation;
use super::edits::HeadEdits;
use crate::attention::mask::MaskKind;
use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::tokenize::{Encoded, Token};

/// What to run: a padded batch of texts, and which place to show with which mask.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Request {
    /// The encoder's input (a decoder-only model's input), one text per batch row.
    pub texts: Vec<String>,
    /// An encoder–decoder model's decoder input, one per text; default: the texts. A real
    /// model takes them as transformers takes labels: shifted right behind its start token.
    #[serde(default)]
    pub targets: Vec<String>,
    /// The place to keep; default: every place the model has.
    pub place: Option<Place>,
    /// The mask to run `place` with; default: the mask it was trained with. Another mask is
    /// a what-if, and the run says so.
    pub mask: Option<MaskKind>,
    /// false: scores are not divided by √d_k (a what-if). Named for the JSON request; inside
    /// a run it is [`Settings::scale_scores`].
    pub scale: Option<bool>,
    /// Stop after this layer's weights (from 0): the layers after it are not computed, and
    /// the run has layers 0..=n. What the query–key view asks of each corpus sentence: the
    /// vectors of one layer, not the model's output.
    #[serde(default)]
    pub through_layer: Option<usize>,
    /// Heads turned off in the run, `L.H` comma-separated, each optionally after a place
    /// (`1.0,cross:0.3`); every layer after them is computed with them off.
    #[cfg(feature = "hf")]
    #[serde(default)]
    pub ablate: Option<String>,
    /// Zeros (the default) or each head's mean output over the batch's real tokens.
    #[cfg(feature = "hf")]
    #[serde(default)]
    pub ablation: Ablation,
    /// Keep the model's output (the last hidden state, through every layer) so that the run's
    /// predictions can be read from it afterwards without running again: a view's run
    /// otherwise stops at the last layer's weights.
    #[cfg(feature = "hf")]
    #[serde(default)]
    pub output: bool,
    /// The longer side, in pixels, of the thumbnails a view will draw of every head: a run
    /// too long to keep its weights pools each head to that size as its layer runs, so that
    /// drawing them does not compute every layer again ([`Settings::thumbs`]). The toy-only
    /// build takes it and never pools ahead: its long runs compute each layer again.
    #[serde(default)]
    pub thumbs: Option<usize>,
}

/// One padded row of a batch, as a model takes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub ids: Vec<u32>,
    pub tokens: Vec<Token>,
    /// false at PAD positions.
    pub valid: Vec<bool>,
}

impl Row {
    /// Pads every row to the longest with `pad_id`, shown as `pad`.
    pub fn pad_batch(rows: Vec<Encoded>, pad_id: u32, pad: &Token) -> Vec<Row> {
        let longest = rows.iter().map(|e| e.ids.len()).max().unwrap_or(0);
        rows.into_iter()
            .map(|Encoded { mut ids, mut tokens }| {
                let n = ids.len();
                ids.resize(longest, pad_id);
                tokens.resize(longest, pad.clone());
                Row { ids, tokens, valid: (0..longest).map(|i| i < n).collect() }
            })
            .collect()
    }

    /// transformers' `shift_tokens_right` on padded labels: `start` first, the last position
    /// dropped (so a shorter row keeps its end token): the decoder's view of its target.
    pub fn shift_right(&self, start_id: u32, start: &Token) -> Row {
        fn shift<T: Clone>(first: T, rest: &[T]) -> Vec<T> {
            std::iter::once(first).chain(rest[..rest.len().saturating_sub(1)].iter().cloned()).collect()
        }
        Row {
            ids: shift(start_id, &self.ids),
            tokens: shift(start.clone(), &self.tokens),
            valid: shift(true, &self.valid),
        }
    }
}

/// The rows a network runs: `sources` feed the encoder (or a decoder-only model), `targets`
/// an encoder–decoder model's decoder (row b pairs with row b).
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub sources: Vec<Row>,
    pub targets: Vec<Row>,
}

/// How a network runs a batch: which mask each place gets, which places it keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Whether scores are divided as each block says (÷√d_k mostly): the request's `scale`.
    /// false is a what-if.
    pub scale_scores: bool,
    /// One place run with a mask it was not trained with.
    pub what_if: Option<(Place, MaskKind)>,
    /// The places whose weights are kept; the others are computed only as far as the kept
    /// ones need them.
    pub keep: Vec<Place>,
    /// Whether a kept place stores every layer's weights or recomputes them when asked.
    pub store: Store,
    /// Whether the run gives the last hidden states ([`super::Run::hidden`]). Without them a stack
    /// whose output nothing else reads stops at its last layer's weights: that layer computes
    /// Q and K, not V, W_O or the feed-forward (see [`Until`]); an encoder whose output the
    /// decoder's cross-attention reads runs whole.
    pub hidden: bool,
    /// Without `hidden`, stop after this layer (from 0) instead of the last.
    pub through: Option<usize>,
    /// Heads turned off or given another run's output.
    pub edits: HeadEdits,
    /// Whether the run keeps the residual stream after every layer of the stack that ends it
    /// ([`super::Hidden::residuals`]): what the logit lens reads.
    pub residuals: bool,
    /// A stack begun partway, from a residual stream another run kept: activation patching
    /// reuses the corrupted run's layers below the patched one.
    pub start: Option<Start>,
    /// Rows that do not keep their weights ([`Store::OnDemand`]) pool every head to a thumbnail
    /// this many pixels on its longer side as each layer runs
    /// ([`super::RowAttention::pool`]).
    pub thumbs: Option<usize>,
}

/// Where a stack begins when not at its first layer: block `layer` of the stack whose
/// self-attention is at `place` reads `residual` (T, D), the stream after block `layer − 1`
/// of another run of the same single row. A stack begun so records no weights: only its output
/// is read.
#[derive(Debug, Clone, PartialEq)]
pub struct Start {
    pub place: Place,
    pub layer: usize,
    pub residual: Arc<Array2<f32>>,
}

/// How far a stack of layers runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// Through every layer: its output is read (hidden states, an encoder's output for the
    /// decoder's cross-attention, generation).
    Output,
    /// Until the last layer's weights are recorded: nothing reads that layer's output.
    LastWeights,
    /// Until this layer's weights are recorded (from 0; the last if the stack has fewer).
    Through(usize),
}

impl Until {
    /// Whether layer `layer` of `layers` is the last and only its weights are needed.
    pub fn stops_at(self, layer: usize, layers: usize) -> bool {
        match self {
            Until::Output => false,
            Until::LastWeights => layer + 1 == layers,
            Until::Through(n) => layer == n.min(layers.saturating_sub(1)),
        }
    }
}

/// Where a run's weights live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// Every layer's weights when the run's fit in [`KEEP_ALL_BYTES`], else on demand.
    Auto,
    /// Every layer's weights, computed once.
    All,
    /// Each layer's inputs only; a layer's weights are recomputed through its block when a
    /// view asks, and the last few are cached. Memory: the inputs plus a few layers.
    OnDemand,
}

/// Up to this many bytes of weights a run keeps whole; beyond it, it keeps layer inputs.
pub const KEEP_ALL_BYTES: usize = 128 << 20;

impl Settings {
    /// Every place with its trained mask, scaled, weights stored as they fit.
    pub fn trained() -> Self {
        Settings {
            scale_scores: true,
            what_if: None,
            keep: Place::ALL.to_vec(),
            store: Store::Auto,
            hidden: true,
            through: None,
            edits: HeadEdits::default(),
            residuals: false,
            start: None,
            thumbs: None,
        }
    }

    /// The layer the stack at `place` begins at, and the stream it reads there (T, D), checked
    /// against the width of `x`, the stream the stack would begin from: none when it begins at 0.
    pub(crate) fn start_of(&self, place: Place, x: &Array2<f32>) -> Result<Option<(usize, Array2<f32>)>> {
        match &self.start {
            Some(start) if start.place == place && start.layer > 0 => {
                if start.residual.dim() != x.dim() {
                    let (t, d) = start.residual.dim();
                    return Err(Error::shape(
                        "the residual stream a stack begins from",
                        &[t, d],
                        &[x.nrows(), x.ncols()],
                    ));
                }
                Ok(Some((start.layer, start.residual.as_ref().clone())))
            }
            _ => Ok(None),
        }
    }

    /// How far the stack that ends a run goes: to its output when the hidden states are
    /// asked for, else to its last layer's weights (or the `through` layer's).
    pub fn until(&self) -> Until {
        match (self.hidden, self.through) {
            (true, _) => Until::Output,
            (false, Some(n)) => Until::Through(n),
            (false, None) => Until::LastWeights,
        }
    }

    /// The mask `place` runs with: the what-if's, or `trained`.
    pub fn mask(&self, place: Place, trained: MaskKind) -> MaskKind {
        match self.what_if {
            Some((p, mask)) if p == place => mask,
            _ => trained,
        }
    }

    pub fn keeps(&self, place: Place) -> bool {
        self.keep.contains(&place)
    }
}
