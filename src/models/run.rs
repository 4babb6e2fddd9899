//! What a model is asked (a [`Request`]) and what it gives back (a [`Run`]): per place
//! attention is used, per batch row, every layer's and head's weights in one array.
//! Shared by the toy model and every real model.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use ndarray::{Array2, Array3, Array4, Axis};
use serde::{Deserialize, Serialize};

use crate::attention::mask::{Mask, MaskKind};
use crate::attention::multi_head::{HeadTrace, MultiHeadAttention, MultiHeadOutput};
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
    /// Whether a kept place stores every layer's weights or recomputes them when asked.
    pub store: Store,
    /// Whether the run gives the last hidden states ([`Run::hidden`]). Without them a stack
    /// whose output nothing else reads stops at its last layer's weights: that layer computes
    /// Q and K, not V, W_O or the feed-forward (see [`Until`]); an encoder whose output the
    /// decoder's cross-attention reads runs whole.
    pub hidden: bool,
}

/// How far a stack of layers runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// Through every layer: its output is read (hidden states, an encoder's output for the
    /// decoder's cross-attention, generation).
    Output,
    /// Until the last layer's weights are recorded: nothing reads that layer's output.
    LastWeights,
}

impl Until {
    /// Whether layer `layer` of `layers` is the last and only its weights are needed.
    pub fn stops_at(self, layer: usize, layers: usize) -> bool {
        self == Until::LastWeights && layer + 1 == layers
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

/// How many computed layers an on-demand row keeps: the layer a view shows and the last one.
const CACHED_LAYERS: usize = 2;

impl Settings {
    /// Every place with its trained mask, scaled, weights stored as they fit.
    pub fn trained() -> Self {
        Settings { scale: true, what_if: None, keep: Place::ALL.to_vec(), store: Store::Auto, hidden: true }
    }

    /// How far the stack that ends a run goes: to its output when the hidden states are
    /// asked for, else to its last layer's weights.
    pub fn until(&self) -> Until {
        if self.hidden {
            Until::Output
        } else {
            Until::LastWeights
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

/// One place of a model, as it was trained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlaceInfo {
    pub place: Place,
    /// The mask it was trained with.
    pub mask: MaskKind,
    pub layers: usize,
    pub heads: usize,
    /// Key/value heads: `heads` unless grouped-query attention, where query head h shares the
    /// keys and values of K/V head h / (heads / kv_heads).
    pub kv_heads: usize,
    /// The width of one head's queries and keys.
    pub d_k: usize,
    /// Per layer, how many keys a local (sliding-window) layer lets a query see, itself
    /// included, or `None` for a layer that sees every key its mask allows. GPT-Neo's local
    /// layers, Mistral's and some Qwen2 layers are windowed.
    pub windows: Vec<Option<usize>>,
}

impl PlaceInfo {
    /// A place whose `layers` layers all have `heads` heads of `d_k`, none grouped or windowed.
    pub fn new(place: Place, mask: MaskKind, layers: usize, heads: usize, d_k: usize) -> Self {
        PlaceInfo { place, mask, layers, heads, kv_heads: heads, d_k, windows: vec![None; layers] }
    }

    /// The same place with `kv_heads` key/value heads.
    pub fn grouped(self, kv_heads: usize) -> Self {
        PlaceInfo { kv_heads, ..self }
    }

    /// The same place with per-layer windows.
    pub fn windowed(self, windows: Vec<Option<usize>>) -> Self {
        PlaceInfo { windows, ..self }
    }
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

/// The inputs of one layer's attention block, kept so any head can be recomputed and traced.
#[derive(Debug, Clone)]
pub struct LayerInputs {
    pub x_q: Arc<Array2<f32>>,  // (Tq, D)
    pub x_kv: Arc<Array2<f32>>, // (Tk, D)
}

/// What one layer of a row needs to give its weights again: the block, its inputs and mask.
#[derive(Debug, Clone)]
struct LayerRecord {
    block: Arc<MultiHeadAttention>,
    mask: Arc<Mask>,
    inputs: LayerInputs,
    /// Every head's weights (H, Tq, Tk), when the run keeps them.
    weights: Option<Arc<Array3<f32>>>,
    /// Each head's largest weight (H,), kept either way.
    maxima: Vec<f32>,
}

/// One batch row at one place: its tokens, masks and every layer's and head's weights —
/// kept, or recomputed from the layer's inputs when asked (see [`Store`]).
#[derive(Debug)]
pub struct RowAttention {
    /// The query side's tokens (padded to Tq).
    pub queries: Vec<Token>,
    /// The key side's tokens (padded to Tk).
    pub keys: Vec<Token>,
    pub query_valid: Vec<bool>,
    pub key_valid: Vec<bool>,
    layers: usize,
    heads: usize,
    scale: bool,
    keep: bool,
    records: Vec<LayerRecord>,
    /// On demand: the last layers computed, most recent last.
    cache: Mutex<VecDeque<(usize, Arc<Array3<f32>>)>>,
}

impl Clone for RowAttention {
    fn clone(&self) -> Self {
        RowAttention {
            queries: self.queries.clone(),
            keys: self.keys.clone(),
            query_valid: self.query_valid.clone(),
            key_valid: self.key_valid.clone(),
            layers: self.layers,
            heads: self.heads,
            scale: self.scale,
            keep: self.keep,
            records: self.records.clone(),
            cache: Mutex::new(VecDeque::new()),
        }
    }
}

impl RowAttention {
    /// An empty row of `layers` × `heads` weights over the given tokens, filled layer by layer
    /// with [`RowAttention::push_layer`]; `keep` stores every layer's weights, else they are
    /// recomputed when asked. `scale` false runs without the blocks' scaling (a what-if).
    pub fn new(queries: &Row, keys: &Row, layers: usize, heads: usize, scale: bool, keep: bool) -> Self {
        RowAttention {
            queries: queries.tokens.clone(),
            keys: keys.tokens.clone(),
            query_valid: queries.valid.clone(),
            key_valid: keys.valid.clone(),
            layers,
            heads,
            scale,
            keep,
            records: Vec::with_capacity(layers),
            cache: Mutex::new(VecDeque::new()),
        }
    }

    /// Whether this row stores every layer's weights (else it recomputes them).
    pub fn keeps_weights(&self) -> bool {
        self.keep
    }

    /// Records the next layer: its block, what the block gave (its weights, kept if this row
    /// keeps them, and each head's maximum), its mask and its inputs.
    pub fn push_layer(
        &mut self,
        block: &Arc<MultiHeadAttention>,
        out: MultiHeadOutput,
        mask: &Arc<Mask>,
        inputs: LayerInputs,
    ) {
        let weights = (self.keep && !out.weights.is_empty()).then(|| Arc::new(out.weights));
        let record =
            LayerRecord { block: Arc::clone(block), mask: Arc::clone(mask), inputs, weights, maxima: out.maxima };
        self.records.push(record);
    }

    pub fn layers(&self) -> usize {
        self.layers
    }

    pub fn heads(&self) -> usize {
        self.heads
    }

    /// (Tq, Tk).
    pub fn size(&self) -> (usize, usize) {
        (self.queries.len(), self.keys.len())
    }

    fn record(&self, layer: usize) -> Result<&LayerRecord> {
        Error::check_index("layer", layer, self.records.len())?;
        Ok(&self.records[layer])
    }

    /// Every head's weights in `layer`, (H, Tq, Tk): stored, cached, or computed now.
    pub fn layer(&self, layer: usize) -> Result<Arc<Array3<f32>>> {
        let record = self.record(layer)?;
        if let Some(w) = &record.weights {
            return Ok(Arc::clone(w));
        }
        let cached = |cache: &VecDeque<(usize, Arc<Array3<f32>>)>| {
            cache.iter().find(|(l, _)| *l == layer).map(|(_, w)| Arc::clone(w))
        };
        if let Some(w) = self.cache.lock().ok().and_then(|c| cached(&c)) {
            return Ok(w);
        }
        let LayerInputs { x_q, x_kv } = &record.inputs;
        let weights = Arc::new(record.block.weights(x_q.view(), x_kv.view(), Some(&record.mask), self.scale)?);
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= CACHED_LAYERS {
                cache.pop_front();
            }
            cache.push_back((layer, Arc::clone(&weights)));
        }
        Ok(weights)
    }

    /// The weights of one head, (Tq, Tk).
    pub fn head(&self, layer: usize, head: usize) -> Result<Array2<f32>> {
        Error::check_index("layer", layer, self.layers())?;
        Error::check_index("head", head, self.heads())?;
        Ok(self.layer(layer)?.index_axis(Axis(0), head).to_owned())
    }

    /// Every layer's and head's weights, (L, H, Tq, Tk), refused when larger than
    /// [`MAX_WEIGHT_BYTES`]: a whole row for an export or one copy to a page.
    pub fn weights(&self) -> Result<Array4<f32>> {
        let (tq, tk) = self.size();
        check_size(self.layers.saturating_mul(self.heads).saturating_mul(tq).saturating_mul(tk))?;
        let size = self.layers * self.heads * tq * tk;
        // filled layer by layer, never zeroed first: at 512 tokens that is 75 MB written once
        let mut all = Vec::with_capacity(size); // (L, H, Tq, Tk)
        for layer in 0..self.records.len().min(self.layers) {
            let w = self.layer(layer)?; // (H, Tq, Tk), row-major as every block gives it
            let (h, q, k) = w.dim();
            all.extend_from_slice(w.as_slice().ok_or_else(|| Error::shape("layer weights", &[h, q, k], &[h, q, k]))?);
        }
        all.resize(size, 0.0); // layers a run never reached
        Array4::from_shape_vec((self.layers, self.heads, tq, tk), all)
            .map_err(|_| Error::shape("weights", &[size], &[self.layers, self.heads, tq, tk]))
    }

    /// The largest weight of every head, (L, H), for colour ranges: recorded as each layer
    /// was run, so it needs no weights kept.
    pub fn maxima(&self) -> Result<Array2<f32>> {
        let mut maxima = Array2::zeros((self.layers, self.heads)); // (L, H)
        for (layer, record) in self.records.iter().enumerate().take(self.layers) {
            for (h, &m) in record.maxima.iter().enumerate().take(self.heads) {
                maxima[[layer, h]] = m;
            }
        }
        Ok(maxima)
    }

    /// The mask of `layer`, (Tq, Tk).
    pub fn mask(&self, layer: usize) -> Result<&Mask> {
        Ok(&self.record(layer)?.mask)
    }

    /// The inputs of `layer`'s attention block.
    pub fn inputs(&self, layer: usize) -> Result<&LayerInputs> {
        Ok(&self.record(layer)?.inputs)
    }

    /// Every step of `head` in `layer`, recomputed from the layer's block and inputs.
    pub fn trace(&self, layer: usize, head: usize) -> Result<HeadTrace> {
        let record = self.record(layer)?;
        let LayerInputs { x_q, x_kv } = &record.inputs;
        record.block.trace(x_q.view(), x_kv.view(), Some(&record.mask), self.scale, head)
    }

    /// Queries that could see no key in `layer`: their weights are all zero.
    pub fn fully_masked_rows(&self, layer: usize) -> Result<Vec<usize>> {
        Ok(self.mask(layer)?.fully_masked_rows())
    }
}

/// Runs `block` with queries from `x_q` over `x_kv` and records the layer in `record`, if
/// any: the block's output (Tq, D). A row that does not keep weights gets none: each head's
/// weights live only while that head is computed.
pub(crate) fn attend(
    block: &Arc<MultiHeadAttention>,
    x_q: &Arc<Array2<f32>>,
    x_kv: &Arc<Array2<f32>>,
    mask: &Arc<Mask>,
    scale: bool,
    record: Option<&mut RowAttention>,
) -> Result<Array2<f32>> {
    let inputs = || LayerInputs { x_q: Arc::clone(x_q), x_kv: Arc::clone(x_kv) };
    match record {
        Some(row) => {
            let mut a = if row.keeps_weights() {
                block.forward(x_q.view(), x_kv.view(), Some(mask), scale)?
            } else {
                block.forward_lean(x_q.view(), x_kv.view(), Some(mask), scale)?
            };
            let output = std::mem::take(&mut a.output);
            row.push_layer(block, a, mask, inputs());
            Ok(output)
        }
        None => Ok(block.forward_lean(x_q.view(), x_kv.view(), Some(mask), scale)?.output),
    }
}

/// Records `block`'s weights for queries `x_q` over `x_kv` in `row`, without the block's
/// output: no V, ·V or W_O. The last layer of a stack whose output nothing reads.
pub(crate) fn attend_weights(
    block: &Arc<MultiHeadAttention>,
    x_q: &Arc<Array2<f32>>,
    x_kv: &Arc<Array2<f32>>,
    mask: &Arc<Mask>,
    scale: bool,
    row: &mut RowAttention,
) -> Result<()> {
    let out = block.forward_weights(x_q.view(), x_kv.view(), Some(mask), scale, row.keeps_weights())?;
    row.push_layer(block, out, mask, LayerInputs { x_q: Arc::clone(x_q), x_kv: Arc::clone(x_kv) });
    Ok(())
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
    layers: usize,
    heads: usize,
    keep: bool,
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
            layers: info.layers,
            heads: info.heads,
            keep: settings.store != Store::OnDemand,
        }
    }

    /// An empty record of one batch row, `queries` over `keys`, as this place stores it.
    pub fn record(&self, queries: &Row, keys: &Row) -> RowAttention {
        RowAttention::new(queries, keys, self.layers, self.heads, self.scale, self.keep)
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

/// The last hidden states of one batch row; `None` where the run was asked for weights only
/// ([`Settings::hidden`] false) and the stack stopped at its last layer's weights.
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

/// Bytes of attention weights that may be handed over at once (a whole row, an export, one
/// layer computed on demand): beyond this a page would run out of memory.
pub const MAX_WEIGHT_BYTES: usize = 1 << 30;

/// Fails with [`Error::TooLarge`] when `weights` f32 values would pass [`MAX_WEIGHT_BYTES`].
pub(crate) fn check_size(weights: usize) -> Result<()> {
    let bytes = weights.saturating_mul(4);
    if bytes > MAX_WEIGHT_BYTES {
        return Err(Error::TooLarge { megabytes: bytes >> 20, max: MAX_WEIGHT_BYTES >> 20 });
    }
    Ok(())
}
