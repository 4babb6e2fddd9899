//! What a run records of one batch row at one place ([`RowAttention`]): per layer the
//! attention block, its inputs and mask, and its weights — kept, pooled to thumbnails, or
//! recomputed when asked. `super::attend` records a stack's layers as they run.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use ndarray::{Array2, Array3, Array4, Axis};

use super::request::Row;
use crate::attention::mask::Mask;
use crate::attention::multi_head::{HeadEdit, HeadTrace, HeadWrites, Kept, MultiHeadAttention, MultiHeadOutput};
use crate::error::{Error, Result};
use crate::stats;
use crate::tokenize::Token;

/// How many computed layers an on-demand row keeps: the layer a view shows and the last one.
const CACHED_LAYERS: usize = 2;

/// A head of at least this many cells is pooled on the threads ([`RowAttention::pooled`]): a
/// 512-token head is.
const POOL_SPLIT_CELLS: usize = 1 << 18;

/// The most bytes of thumbnails a row pools while its layers run ([`RowAttention::pool`]):
/// SmolLM-135M's 270 heads at the explorer's 72 pixels take 5.6 MB, at a phone's 144 (48 at 3
/// device pixels a pixel) 22 MB, less than the layer inputs such a row keeps (140 MB at 2,017
/// tokens). Larger ones are pooled when asked for, from the layer computed again.
const MAX_POOLED_BYTES: usize = 32 << 20;

/// The pixels of a head's thumbnail `size` pixels on its longer side, (rows, columns), for
/// weights (tq, tk), as the page sizes it (`view` in www/js/worker.js): `None` where a cell
/// takes a pixel or more, as the page then paints cells, not pooled pixels.
pub fn thumbnail_pixels(size: usize, (tq, tk): (usize, usize)) -> Option<(usize, usize)> {
    let cell = size as f64 / tq.max(tk).max(1) as f64;
    let side = |cells: usize| ((cell * cells as f64).round() as usize).max(1);
    (cell < 1.0).then(|| (side(tq), side(tk)))
}

/// The inputs of one layer's attention block, kept so any head can be recomputed and traced.
#[derive(Debug, Clone)]
pub struct LayerInputs {
    pub x_q: Arc<Array2<f32>>,  // (Tq, D)
    pub x_kv: Arc<Array2<f32>>, // (Tk, D)
}

/// The block that computed a layer and its inputs: what its weights, trace and vectors are
/// computed again from.
#[derive(Debug, Clone)]
struct Source {
    block: Arc<MultiHeadAttention>,
    inputs: LayerInputs,
}

/// What one layer of a row needs to give its weights again: the block, its inputs and mask.
/// A layer read from a file ([`RowAttention::from_weights`]) has its weights and mask only.
#[derive(Debug, Clone)]
struct LayerRecord {
    source: Option<Source>,
    mask: Arc<Mask>,
    /// Every head's weights (H, Tq, Tk), when the run keeps them.
    weights: Option<Arc<Array3<f32>>>,
    /// Every head's thumbnail (H, rows, columns), when the run pooled them as it went.
    pooled: Option<Arc<Array3<f32>>>,
    /// Each head's largest weight (H,), kept either way.
    maxima: Vec<f32>,
}

/// One batch row at one place: its tokens, masks and every layer's and head's weights —
/// kept, or recomputed from the layer's inputs when asked (see [`super::Store`]).
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
    scale_scores: bool,
    keep: bool,
    /// The (rows, columns) every head is pooled to as its layer runs, when the row does not
    /// keep its weights ([`RowAttention::pool`]).
    pool: Option<(usize, usize)>,
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
            scale_scores: self.scale_scores,
            keep: self.keep,
            pool: self.pool,
            records: self.records.clone(),
            cache: Mutex::new(VecDeque::new()),
        }
    }
}

impl LayerRecord {
    fn source(&self) -> Result<&Source> {
        self.source.as_ref().ok_or(Error::NeedsModel)
    }
}

impl RowAttention {
    /// An empty row of `layers` × `heads` weights over the given tokens, filled layer by layer
    /// with [`RowAttention::push_layer`]; `keep` stores every layer's weights, else they are
    /// recomputed when asked. `scale_scores` false runs without the blocks' scaling (a what-if).
    pub fn new(queries: &Row, keys: &Row, layers: usize, heads: usize, scale_scores: bool, keep: bool) -> Self {
        RowAttention {
            queries: queries.tokens.clone(),
            keys: keys.tokens.clone(),
            query_valid: queries.valid.clone(),
            key_valid: keys.valid.clone(),
            layers,
            heads,
            scale_scores,
            keep,
            pool: None,
            records: Vec::with_capacity(layers),
            cache: Mutex::new(VecDeque::new()),
        }
    }

    /// Whether this row stores every layer's weights (else it recomputes them).
    pub fn keeps_weights(&self) -> bool {
        self.keep
    }

    /// Asks a row that does not keep its weights to pool every head to a thumbnail `size`
    /// pixels on its longer side as each layer runs, so that a view draws every head without
    /// computing each layer again ([`RowAttention::pooled`] of that size). Nothing to do for a
    /// row that keeps its weights, for cells of a pixel or more ([`thumbnail_pixels`]) or
    /// past [`MAX_POOLED_BYTES`].
    pub fn pool(&mut self, size: usize) {
        let pixels = thumbnail_pixels(size, self.size()).filter(|&(rows, columns)| {
            let bytes = [self.layers, self.heads, rows, columns, 4].iter().try_fold(1usize, |a, &b| a.checked_mul(b));
            bytes.is_some_and(|b| b <= MAX_POOLED_BYTES)
        });
        self.pool = pixels.filter(|_| !self.keep);
    }

    /// How many layers hold thumbnails pooled as they ran.
    pub fn pooled_layers(&self) -> usize {
        self.records.iter().filter(|r| r.pooled.is_some()).count()
    }

    /// What a layer's pass keeps of its heads' weights for this row.
    pub fn kept(&self) -> Kept {
        match (self.keep, self.pool) {
            (true, _) => Kept::Weights,
            (false, Some((rows, columns))) => Kept::Pooled(rows, columns),
            (false, None) => Kept::Maxima,
        }
    }

    /// Records the next layer: its block, what the block gave (its weights, kept if this row
    /// keeps them, or its heads' thumbnails if it pools them, and each head's maximum), its
    /// mask and its inputs.
    pub fn push_layer(
        &mut self,
        block: &Arc<MultiHeadAttention>,
        out: MultiHeadOutput,
        mask: &Arc<Mask>,
        inputs: LayerInputs,
    ) {
        let weights = (self.keep && !out.weights.is_empty()).then(|| Arc::new(out.weights));
        let pooled = out.pooled.filter(|p| Some((p.dim().1, p.dim().2)) == self.pool).map(Arc::new);
        let source = Some(Source { block: Arc::clone(block), inputs });
        self.records.push(LayerRecord { source, mask: Arc::clone(mask), weights, pooled, maxima: out.maxima });
    }

    /// A row of weights computed elsewhere (an attention file): every layer's (H, Tq, Tk)
    /// weights and mask, nothing to compute them again from. The caller checks the shapes.
    pub fn from_weights(queries: &Row, keys: &Row, heads: usize, layers: Vec<(Array3<f32>, Arc<Mask>)>) -> Self {
        let mut row = RowAttention::new(queries, keys, layers.len(), heads, true, true);
        row.records = layers
            .into_iter()
            .map(|(weights, mask)| {
                let maxima = weights.outer_iter().map(|h| h.iter().copied().fold(0.0, f32::max)).collect();
                LayerRecord { source: None, mask, weights: Some(Arc::new(weights)), pooled: None, maxima }
            })
            .collect();
        row
    }

    pub fn layers(&self) -> usize {
        self.layers
    }

    /// A run stopped early (`Request::through_layer`) has the layers it computed, no more.
    pub(crate) fn keep_computed_layers(&mut self) {
        self.layers = self.layers.min(self.records.len());
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
        let Source { block, inputs: LayerInputs { x_q, x_kv } } = record.source()?;
        let weights = Arc::new(block.weights(x_q.view(), x_kv.view(), Some(&record.mask), self.scale_scores)?);
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

    /// One head max-pooled to (out_h, out_w) pixels for drawing ([`stats::max_pool`]), read
    /// where the layer's weights are, without a copy of the head; bands of pixel rows on the
    /// threads when the head is large (a thumbnail of every head of SmolLM-135M's shape at
    /// 2,017 tokens is 270 heads of 4 million cells each). A thumbnail the row pooled as its
    /// layer ran ([`RowAttention::pool`]) is given as it is: the same values.
    pub fn pooled(&self, layer: usize, head: usize, out_h: usize, out_w: usize) -> Result<Array2<f32>> {
        Error::check_index("head", head, self.heads())?;
        if let Some(pictures) = self.record(layer)?.pooled.as_ref().filter(|_| cfg!(feature = "hf")) {
            if (pictures.dim().1, pictures.dim().2) == (out_h.max(1), out_w.max(1)) {
                return Ok(pictures.index_axis(Axis(0), head).to_owned());
            }
        }
        let weights = self.layer(layer)?;
        let (w, allowed) = (weights.index_axis(Axis(0), head), self.mask(layer)?.allowed());
        let (out_h, out_w) = (out_h.max(1), out_w.max(1));
        let bands = crate::par::threads().min(out_h);
        if bands < 2 || !crate::par::worth_splitting(w.len(), POOL_SPLIT_CELLS) {
            return Ok(stats::max_pool(w, Some(allowed), out_h, out_w));
        }
        let step = out_h.div_ceil(bands);
        let starts: Vec<usize> = (0..out_h).step_by(step).collect();
        let pieces = crate::par::map(&starts, |&y| stats::max_pool_rows(w, Some(allowed), out_h, out_w, y..y + step));
        Array2::from_shape_vec((out_h, out_w), pieces.concat())
            .map_err(|_| Error::shape("pooled head", &[out_h * out_w], &[out_h, out_w]))
    }

    /// Every layer's and head's weights, (L, H, Tq, Tk), refused when larger than
    /// [`MAX_WEIGHT_BYTES`]: a whole row for an export or one copy to a page.
    pub fn weights(&self) -> Result<Array4<f32>> {
        let (tq, tk) = self.size();
        let size = self.weights_len()?;
        // filled layer by layer, never zeroed first: at 512 tokens that is 75 MB written once
        let mut all = Vec::with_capacity(size); // (L, H, Tq, Tk)
        self.each_layer(|_, w| all.extend_from_slice(w))?;
        all.resize(size, 0.0); // layers a run never reached
        Array4::from_shape_vec((self.layers, self.heads, tq, tk), all)
            .map_err(|_| Error::shape("weights", &[size], &[self.layers, self.heads, tq, tk]))
    }

    /// How many weights the row has, L · H · Tq · Tk; refused past [`MAX_WEIGHT_BYTES`].
    pub fn weights_len(&self) -> Result<usize> {
        let (tq, tk) = self.size();
        let size = self.layers.saturating_mul(self.heads).saturating_mul(tq).saturating_mul(tk);
        check_size(size)?;
        Ok(size)
    }

    /// Each layer's weights in turn, (H, Tq, Tk) row-major, to `f` with the layer's index;
    /// refused as [`Self::weights`] is. For one copy of the whole row straight to where it goes
    /// (a page's array) with one layer in memory at a time. Layers a run never reached are
    /// not given.
    pub fn each_layer(&self, mut f: impl FnMut(usize, &[f32])) -> Result<()> {
        self.weights_len()?;
        let want = [self.heads, self.size().0, self.size().1];
        for layer in 0..self.records.len().min(self.layers) {
            let w = self.layer(layer)?; // (H, Tq, Tk), row-major as every block gives it
            let (h, q, k) = w.dim();
            match w.as_slice() {
                Some(values) if [h, q, k] == want => f(layer, values),
                _ => return Err(Error::shape(format!("layer {layer} weights"), &[h, q, k], &want)),
            }
        }
        Ok(())
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
        Ok(&self.record(layer)?.source()?.inputs)
    }

    /// Every step of `head` in `layer`, recomputed from the layer's block and inputs.
    pub fn trace(&self, layer: usize, head: usize) -> Result<HeadTrace> {
        let record = self.record(layer)?;
        let Source { block, inputs: LayerInputs { x_q, x_kv } } = record.source()?;
        block.trace(x_q.view(), x_kv.view(), Some(&record.mask), self.scale_scores, head)
    }

    /// Every head's output before W_O in `layer`, (Tq, H·d_k), recomputed from the layer's
    /// block and inputs: what mean-ablation averages and patching copies.
    pub fn head_outputs(&self, layer: usize) -> Result<Array2<f32>> {
        let record = self.record(layer)?;
        let Source { block, inputs: LayerInputs { x_q, x_kv } } = record.source()?;
        block.head_outputs(x_q.view(), x_kv.view(), Some(&record.mask), self.scale_scores)
    }

    /// ‖v_j W_O^h‖ in `layer`, (H, Tk): what each key would add through each head, per unit
    /// of weight (the value-weighted view's factor).
    pub fn value_norms(&self, layer: usize) -> Result<Array2<f32>> {
        let Source { block, inputs } = self.record(layer)?.source()?;
        block.value_norms(inputs.x_kv.view())
    }

    /// What every head of `layer` writes at each query, `edits` applied as the run applied them.
    pub fn head_writes(&self, layer: usize, edits: &[(usize, &HeadEdit)]) -> Result<HeadWrites> {
        let record = self.record(layer)?;
        let Source { block, inputs: LayerInputs { x_q, x_kv } } = record.source()?;
        block.head_writes(x_q.view(), x_kv.view(), Some(&record.mask), self.scale_scores, edits)
    }

    /// Every head's Q (H, Tq, d_k) and K (H, Tk, d_k) in `layer` as its scores use them, and
    /// what the scores divide their products by: QKᵀ / divisor (+ a position bias) is what the
    /// mask and softmax get.
    pub fn queries_keys(&self, layer: usize) -> Result<(Array3<f32>, Array3<f32>, f32)> {
        let Source { block, inputs: LayerInputs { x_q, x_kv } } = self.record(layer)?.source()?;
        let (q, k) = block.queries_keys(x_q.view(), x_kv.view())?;
        Ok((q, k, block.score_scale.divisor(block.head_dim, self.scale_scores)))
    }

    /// Queries that could see no key in `layer`: their weights are all zero.
    pub fn fully_masked_rows(&self, layer: usize) -> Result<Vec<usize>> {
        Ok(self.mask(layer)?.fully_masked_rows())
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
