//! The post-LN encoder and decoder layers of "Attention Is All You Need" (§3.1), shared by
//! the toy model, BERT (whose layer is the encoder layer) and BART/Marian:
//!
//! ```text
//! encoder layer:  x → self-attention → Add & Norm = x₁ → FFN → Add & Norm
//! decoder layer:  y → masked self-attention → Add & Norm = y₁
//!                 y₁ → cross-attention (Q from y₁, K·V from the encoder output) → Add & Norm = y₂
//!                 y₂ → FFN → Add & Norm
//! ```

use std::sync::Arc;

use ndarray::Array2;

use super::run::{LayerInputs, RowAttention};
use crate::attention::mask::Mask;
use crate::attention::multi_head::MultiHeadAttention;
use crate::error::Result;
use crate::nn::{FeedForward, LayerNorm};

/// One post-LN encoder layer (BART's `encoder.layers.N`, BERT's `encoder.layer.N`).
#[derive(Debug, Clone)]
pub struct EncoderLayer {
    pub self_attn: MultiHeadAttention,
    pub self_attn_norm: LayerNorm,
    pub ffn: FeedForward,
    pub final_norm: LayerNorm,
}

/// One post-LN decoder layer (BART's `decoder.layers.N`).
#[derive(Debug, Clone)]
pub struct DecoderLayer {
    pub self_attn: MultiHeadAttention,
    pub self_attn_norm: LayerNorm,
    pub cross_attn: MultiHeadAttention,
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
        let a = layer.self_attn.forward(x.view(), x.view(), Some(mask), scale)?;
        let x1 = layer.self_attn_norm.forward((&*x + &a.output).view()); // (T, D)
        let f = layer.ffn.forward(x1.view())?;
        let next = layer.final_norm.forward((&x1 + &f).view());
        if let Some(row) = record.as_deref_mut() {
            row.push_layer(&a.weights, mask, LayerInputs { x_q: Arc::clone(&x), x_kv: Arc::clone(&x) });
        }
        x = Arc::new(next);
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
        let a = layer.self_attn.forward(y.view(), y.view(), Some(self_mask), scale)?;
        let y1 = Arc::new(layer.self_attn_norm.forward((&*y + &a.output).view())); // (Tt, D)
        let c = layer.cross_attn.forward(y1.view(), memory.view(), Some(cross_mask), scale)?;
        let y2 = layer.cross_attn_norm.forward((&*y1 + &c.output).view());
        let f = layer.ffn.forward(y2.view())?;
        let next = layer.final_norm.forward((&y2 + &f).view());
        if let Some(row) = self_record.as_deref_mut() {
            row.push_layer(&a.weights, self_mask, LayerInputs { x_q: Arc::clone(&y), x_kv: Arc::clone(&y) });
        }
        if let Some(row) = cross_record.as_deref_mut() {
            row.push_layer(&c.weights, cross_mask, LayerInputs { x_q: y1, x_kv: Arc::clone(memory) });
        }
        y = Arc::new(next);
    }
    Ok(Arc::unwrap_or_clone(y))
}
