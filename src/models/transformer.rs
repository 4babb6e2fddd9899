//! The post-LN encoder and decoder layers of "Attention Is All You Need" (§3.1), shared by
//! the toy model, BERT (whose layer is the encoder layer) and BART/Marian:
//!
//! ```text
//! encoder layer:  x → self-attention → Add & Norm = x₁ → FFN → Add & Norm
//! decoder layer:  y → masked self-attention → Add & Norm = y₁
//!                 y₁ → cross-attention (Q from y₁, K·V from the encoder output) → Add & Norm = y₂
//!                 y₂ → FFN → Add & Norm
//! ```
//!
//! Decoder-only models (GPT-2, GPT-Neo, GPT-NeoX, Llama-style) run their own pre-norm blocks
//! through [`decoder_only`], which gives each layer its mask (a window where a layer has one).

use std::sync::Arc;

use ndarray::Array2;

use super::place_mask;
use super::run::{attend, Batch, Hidden, PlaceInfo, PlaceRun, Row, RowAttention, Run, Settings};
use crate::attention::mask::Mask;
use crate::attention::multi_head::MultiHeadAttention;
use crate::error::Result;
use crate::nn::{FeedForward, LayerNorm};

/// One post-LN encoder layer (BART's `encoder.layers.N`, BERT's `encoder.layer.N`).
#[derive(Debug, Clone)]
pub struct EncoderLayer {
    pub self_attn: Arc<MultiHeadAttention>,
    pub self_attn_norm: LayerNorm,
    pub ffn: FeedForward,
    pub final_norm: LayerNorm,
}

/// One post-LN decoder layer (BART's `decoder.layers.N`).
#[derive(Debug, Clone)]
pub struct DecoderLayer {
    pub self_attn: Arc<MultiHeadAttention>,
    pub self_attn_norm: LayerNorm,
    pub cross_attn: Arc<MultiHeadAttention>,
    pub cross_attn_norm: LayerNorm,
    pub ffn: FeedForward,
    pub final_norm: LayerNorm,
}

/// Runs `x` (T, D) through an encoder stack with `mask` (T, T), recording each layer's
/// attention into `record` when given; returns the encoder output (T, D).
pub fn encode(
    layers: &[EncoderLayer],
    x: Array2<f32>,
    mask: &Arc<Mask>,
    scale: bool,
    mut record: Option<&mut RowAttention>,
) -> Result<Array2<f32>> {
    let mut x = Arc::new(x);
    for layer in layers {
        let a = attend(&layer.self_attn, &x, &x, mask, scale, record.as_deref_mut())?;
        let x1 = layer.self_attn_norm.forward((&*x + &a).view()); // (T, D)
        let f = layer.ffn.forward(x1.view())?;
        x = Arc::new(layer.final_norm.forward((&x1 + &f).view()));
    }
    Ok(Arc::unwrap_or_clone(x))
}

/// The masks and records of a decoder stack's two attention places.
pub struct DecoderPlaces<'a> {
    pub self_mask: &'a Arc<Mask>,  // (Tt, Tt)
    pub cross_mask: &'a Arc<Mask>, // (Tt, Ts)
    pub self_record: Option<&'a mut RowAttention>,
    pub cross_record: Option<&'a mut RowAttention>,
}

/// Runs `y` (Tt, D) through a decoder stack attending to `memory` (Ts, D), the encoder
/// output; returns the decoder output (Tt, D).
pub fn decode(
    layers: &[DecoderLayer],
    y: Array2<f32>,
    memory: &Arc<Array2<f32>>,
    places: DecoderPlaces,
    scale: bool,
) -> Result<Array2<f32>> {
    let DecoderPlaces { self_mask, cross_mask, mut self_record, mut cross_record } = places;
    let mut y = Arc::new(y);
    for layer in layers {
        let a = attend(&layer.self_attn, &y, &y, self_mask, scale, self_record.as_deref_mut())?;
        let y1 = Arc::new(layer.self_attn_norm.forward((&*y + &a).view())); // (Tt, D)
        let c = attend(&layer.cross_attn, &y1, memory, cross_mask, scale, cross_record.as_deref_mut())?;
        let y2 = layer.cross_attn_norm.forward((&*y1 + &c).view());
        let f = layer.ffn.forward(y2.view())?;
        y = Arc::new(layer.final_norm.forward((&y2 + &f).view()));
    }
    Ok(Arc::unwrap_or_clone(y))
}

/// What a query that may see no key gets in a windowed layer — a PAD query at the end of a
/// right-padded row whose window holds only PAD keys — as each family's transformers code
/// computes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EmptyRows {
    /// One additive mask (Llama-style sliding windows): every score becomes the same minimum,
    /// so the weight spreads evenly over every key.
    EveryKey,
    /// Two additive masks (GPT-Neo's local layers): keys both hide fall to −∞, so the weight
    /// spreads over the keys exactly one of them hides.
    OnceMasked,
}

/// The masks of one row in a decoder-only stack: `place`'s mask, narrowed to a window in the
/// layers that have one (`info.windows`), one `Arc` per distinct window.
pub(crate) fn layer_masks(
    info: &PlaceInfo,
    mask: crate::attention::mask::MaskKind,
    row: &Row,
    empty: EmptyRows,
) -> Result<Vec<Arc<Mask>>> {
    let base = place_mask(mask, row, row)?;
    let t = row.ids.len();
    let mut windowed: Vec<(usize, Arc<Mask>)> = Vec::new();
    (0..info.layers)
        .map(|layer| match info.windows.get(layer).copied().flatten() {
            None => Ok(Arc::clone(&base)),
            Some(w) => {
                if let Some((_, m)) = windowed.iter().find(|(size, _)| *size == w) {
                    return Ok(Arc::clone(m));
                }
                let layer = Mask::causal(t).and(&Mask::window(t, t, w))?;
                let narrowed = base.and(&layer)?;
                let fallback = match empty {
                    EmptyRows::EveryKey => ndarray::Array2::from_elem((t, t), true),
                    EmptyRows::OnceMasked => {
                        ndarray::Zip::from(base.allowed()).and(layer.allowed()).map_collect(|&b, &l| b != l)
                    }
                };
                let m = Arc::new(narrowed.with_fallback(fallback)?);
                windowed.push((w, Arc::clone(&m)));
                Ok(m)
            }
        })
        .collect()
}

/// Runs every source row of `batch` through a decoder-only stack and records its
/// self-attention: `embed` gives a row's input (T, D), `layer(i, x, mask, record)` runs
/// layer i on the residual stream in place, `finish` gives the last hidden state.
pub(crate) fn decoder_only(
    info: &PlaceInfo,
    batch: &Batch,
    settings: &Settings,
    empty: EmptyRows,
    embed: impl Fn(&Row) -> Result<Array2<f32>>,
    layer: impl Fn(usize, &mut Array2<f32>, &Arc<Mask>, Option<&mut RowAttention>) -> Result<()>,
    finish: impl Fn(Array2<f32>) -> Array2<f32>,
) -> Result<Run> {
    let mut place = PlaceRun::new(info, settings);
    let mut hidden = Vec::with_capacity(batch.sources.len());
    for row in &batch.sources {
        let mut x = embed(row)?; // (T, D)
        let masks = layer_masks(info, place.mask, row, empty)?;
        let mut record = place.record(row, row);
        for (i, mask) in masks.iter().enumerate() {
            layer(i, &mut x, mask, Some(&mut record))?;
        }
        place.rows.push(record);
        hidden.push(Hidden { encoder: None, decoder: Some(finish(x)) });
    }
    Ok(Run { places: vec![place], hidden })
}
