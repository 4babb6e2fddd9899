//! What a model is asked (a [`Request`]) and what it gives back (a [`Run`]): per place
//! attention is used, per batch row, every layer's and head's weights in one array.
//! Shared by the toy model and every real model.

use std::sync::Arc;

use ndarray::{s, Array2, Array3, Array4, ArrayView2, Axis};
use serde::{Deserialize, Serialize};

use crate::attention::mask::{Mask, MaskKind};
use crate::attention::place::Place;
use crate::cost::Cost;
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
    /// false: scores are not divided by √d_k.
    pub scale: Option<bool>,
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
    pub scale: bool,
    /// One place run with a mask it was not trained with.
    pub what_if: Option<(Place, MaskKind)>,
    /// The places whose weights are kept; the others are computed only as far as the kept
    /// ones need them.
    pub keep: Vec<Place>,
}

impl Settings {
    /// Every place with its trained mask, scaled.
    pub fn trained() -> Self {
        Settings { scale: true, what_if: None, keep: Place::ALL.to_vec() }
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

/// One place of a model, as it was trained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlaceInfo {
    pub place: Place,
    /// The mask it was trained with.
    pub mask: MaskKind,
    pub layers: usize,
    pub heads: usize,
    /// The width of one head's queries and keys.
    pub d_k: usize,
}

/// What a model is, for a page to build its menus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// "toy", or the `model_type` of a real model: "bert", "gpt2", "bart", "marian".
    pub architecture: String,
    /// false for the toy model: its weights are random.
    pub trained: bool,
    /// In the order of the seeds' table.
    pub places: Vec<PlaceInfo>,
    pub encoder_decoder: bool,
    /// Whether the model can write its own target (greedy decoding).
    pub can_generate: bool,
    pub max_tokens: usize,
    pub max_batch: usize,
    pub d_model: usize,
}

impl ModelInfo {
    pub fn place(&self, place: Place) -> Result<&PlaceInfo> {
        self.places.iter().find(|p| p.place == place).ok_or_else(|| Error::PlaceAbsent {
            place: place.name().to_string(),
            have: self.places.iter().map(|p| p.place.name().to_string()).collect(),
        })
    }
}

/// The inputs of one layer's attention block, kept so any head can be traced step by step.
#[derive(Debug, Clone)]
pub struct LayerInputs {
    pub x_q: Arc<Array2<f32>>,  // (Tq, D)
    pub x_kv: Arc<Array2<f32>>, // (Tk, D)
}

/// One batch row at one place: its tokens, masks and every layer's and head's weights.
#[derive(Debug, Clone)]
pub struct RowAttention {
    /// The query side's tokens (padded to Tq).
    pub queries: Vec<Token>,
    /// The key side's tokens (padded to Tk).
    pub keys: Vec<Token>,
    pub query_valid: Vec<bool>,
    pub key_valid: Vec<bool>,
    /// (L, H, Tq, Tk), row-major: layer, head, query, key.
    pub weights: Array4<f32>,
    /// Per layer, the mask the layer applied, (Tq, Tk). Layers usually share one.
    masks: Vec<Arc<Mask>>,
    inputs: Vec<LayerInputs>,
}

impl RowAttention {
    /// An empty row of `layers` × `heads` weights over the given tokens, filled layer by layer
    /// with [`RowAttention::push_layer`].
    pub fn new(queries: &Row, keys: &Row, layers: usize, heads: usize) -> Self {
        let (tq, tk) = (queries.tokens.len(), keys.tokens.len());
        RowAttention {
            queries: queries.tokens.clone(),
            keys: keys.tokens.clone(),
            query_valid: queries.valid.clone(),
            key_valid: keys.valid.clone(),
            weights: Array4::zeros((layers, heads, tq, tk)),
            masks: Vec::with_capacity(layers),
            inputs: Vec::with_capacity(layers),
        }
    }

    /// Records the next layer: its weights (H, Tq, Tk), its mask and its inputs.
    pub fn push_layer(&mut self, weights: &Array3<f32>, mask: &Arc<Mask>, inputs: LayerInputs) {
        let layer = self.inputs.len();
        if layer < self.weights.dim().0 {
            self.weights.index_axis_mut(Axis(0), layer).assign(weights);
        }
        self.masks.push(Arc::clone(mask));
        self.inputs.push(inputs);
    }

    pub fn layers(&self) -> usize {
        self.weights.dim().0
    }

    pub fn heads(&self) -> usize {
        self.weights.dim().1
    }

    /// (Tq, Tk).
    pub fn size(&self) -> (usize, usize) {
        (self.weights.dim().2, self.weights.dim().3)
    }

    /// The weights of one head, (Tq, Tk).
    pub fn head(&self, layer: usize, head: usize) -> Result<ArrayView2<'_, f32>> {
        Error::check_index("layer", layer, self.layers())?;
        Error::check_index("head", head, self.heads())?;
        Ok(self.weights.slice(s![layer, head, .., ..]))
    }

    /// The mask of `layer`, (Tq, Tk).
    pub fn mask(&self, layer: usize) -> Result<&Mask> {
        Error::check_index("layer", layer, self.masks.len())?;
        Ok(&self.masks[layer])
    }

    /// The inputs of `layer`'s attention block.
    pub fn inputs(&self, layer: usize) -> Result<&LayerInputs> {
        Error::check_index("layer", layer, self.inputs.len())?;
        Ok(&self.inputs[layer])
    }

    /// Queries that could see no key in `layer`: their weights are all zero.
    pub fn fully_masked_rows(&self, layer: usize) -> Result<Vec<usize>> {
        Ok(self.mask(layer)?.fully_masked_rows())
    }
}

/// Every batch row at one place.
#[derive(Debug, Clone)]
pub struct PlaceRun {
    pub place: Place,
    /// The mask this place ran with.
    pub mask: MaskKind,
    /// true when `mask` is not the one the place was trained with.
    pub what_if: bool,
    pub scale: bool,
    /// The width of one head's queries and keys.
    pub d_k: usize,
    pub rows: Vec<RowAttention>,
}

impl PlaceRun {
    pub fn new(info: &PlaceInfo, settings: &Settings) -> Self {
        let mask = settings.mask(info.place, info.mask);
        PlaceRun {
            place: info.place,
            mask,
            what_if: mask != info.mask,
            scale: settings.scale,
            d_k: info.d_k,
            rows: Vec::new(),
        }
    }

    pub fn batch(&self) -> usize {
        self.rows.len()
    }

    pub fn layers(&self) -> usize {
        self.rows.first().map_or(0, RowAttention::layers)
    }

    pub fn heads(&self) -> usize {
        self.rows.first().map_or(0, RowAttention::heads)
    }

    /// (H, Tq, Tk), the same for every row of a padded batch.
    pub fn shape(&self) -> (usize, usize, usize) {
        self.rows.first().map_or((0, 0, 0), |r| (r.heads(), r.size().0, r.size().1))
    }

    pub fn row(&self, row: usize) -> Result<&RowAttention> {
        Error::check_index("row", row, self.rows.len())?;
        Ok(&self.rows[row])
    }

    /// The attention cost of one batch row over all layers.
    pub fn cost(&self) -> Cost {
        let (h, tq, tk) = self.shape();
        Cost::of_attention(h, tq, tk, self.d_k, self.d_k).times(self.layers())
    }
}

/// The last hidden states of one batch row.
#[derive(Debug, Clone, Default)]
pub struct Hidden {
    /// The encoder's output (BERT, BART, the toy), (Ts, D).
    pub encoder: Option<Array2<f32>>,
    /// The decoder's output (GPT-2, BART, the toy), (Tt, D).
    pub decoder: Option<Array2<f32>>,
}

/// What one run of a model gives: the kept places in the order of the seeds' table, and the
/// last hidden states per batch row.
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub places: Vec<PlaceRun>,
    pub hidden: Vec<Hidden>,
}

impl Run {
    pub fn place(&self, place: Place) -> Result<&PlaceRun> {
        self.places.iter().find(|p| p.place == place).ok_or_else(|| Error::PlaceAbsent {
            place: place.name().to_string(),
            have: self.places.iter().map(|p| p.place.name().to_string()).collect(),
        })
    }

    pub fn batch(&self) -> usize {
        self.places.first().map_or(0, PlaceRun::batch)
    }
}

/// Bytes of attention weights a run may keep: beyond this a page would run out of memory.
pub const MAX_WEIGHT_BYTES: usize = 1 << 30;

/// Fails with [`Error::TooLarge`] when `weights` f32 values would pass [`MAX_WEIGHT_BYTES`].
pub(crate) fn check_size(weights: usize) -> Result<()> {
    let bytes = weights.saturating_mul(4);
    if bytes > MAX_WEIGHT_BYTES {
        return Err(Error::TooLarge { megabytes: bytes >> 20, max: MAX_WEIGHT_BYTES >> 20 });
    }
    Ok(())
}
