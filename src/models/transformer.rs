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
//! Decoder-only models (GPT-2, GPT-Neo, GPT-NeoX, Llama-style) and T5 run pre-norm blocks
//! instead (`pre_norm`).

#[cfg(feature = "hf")]
use std::ops::Range;
use std::sync::Arc;

use ndarray::Array2;

#[cfg(feature = "hf")]
use super::decoding::{step_mask, tokens_read, LayerCache, Step, StepRows};
use super::network::Stacked;
use crate::attention::mask::Mask;
use crate::attention::multi_head::MultiHeadAttention;
#[cfg(feature = "hf")]
use crate::attention::multi_head::{rows_of, Kept};
use crate::attention::place::Place;
use crate::error::Result;
use crate::nn::{FeedForward, LayerNorm};
#[cfg(feature = "hf")]
use crate::run::in_block;
#[cfg(feature = "hf")]
use crate::run::LayerInputs;
use crate::run::{attend, attend_weights, RowAttention, Settings, Until};

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

/// Runs `x` (T, D) through an encoder stack with `mask` (T, T) as `settings` say, recording
/// each layer's attention into `record` when given (not when the settings begin it partway);
/// gives the encoder output (T, D), or none when it runs only `until` the last layer's weights.
pub(crate) fn encode(
    layers: &[EncoderLayer],
    x: Array2<f32>,
    mask: &Arc<Mask>,
    settings: &Settings,
    mut record: Option<&mut RowAttention>,
    until: Until,
) -> Result<Stacked> {
    let (first, x) = match settings.start_of(Place::EncoderSelf, &x)? {
        Some((layer, begun)) => {
            record = None;
            (layer, begun)
        }
        None => (0, x),
    };
    let mut x = Arc::new(x);
    let mut residuals = Vec::new();
    for (i, layer) in layers.iter().enumerate().skip(first) {
        if until.stops_at(i, layers.len()) {
            if let Some(row) = record {
                attend_weights(&layer.self_attn, &x, &x, mask, settings, (Place::EncoderSelf, i), row)?;
            }
            return Ok(Stacked { output: None, residuals });
        }
        let a = attend(&layer.self_attn, &x, &x, mask, settings, (Place::EncoderSelf, i), record.as_deref_mut())?;
        let x1 = layer.self_attn_norm.forward_sum(x.view(), a); // (T, D)
        let f = layer.ffn.forward(x1.view())?;
        x = Arc::new(layer.final_norm.forward_sum(x1.view(), f));
        if settings.residuals {
            residuals.push(x.as_ref().clone());
        }
    }
    Ok(Stacked { output: Some(Arc::unwrap_or_clone(x)), residuals })
}

/// Whether `encode_stacked` can run `layers` as `settings` say: every block takes texts
/// side by side, and the run turns no head off and begins at the first layer.
#[cfg(feature = "hf")]
pub(crate) fn stacks(layers: &[EncoderLayer], settings: &Settings) -> bool {
    settings.edits.is_empty() && settings.start.is_none() && layers.iter().all(|l| l.self_attn.stacks())
}

/// [`encode`] for several texts at once, their tokens rows `texts` of `x` (ΣT, D), each with
/// its own mask and record: the products take every text's rows together, each text attends
/// over its own. Gives each text's output (or none) and residuals, with the bits `encode`
/// gives that text alone. Only where [`stacks`] says.
#[cfg(feature = "hf")]
pub(crate) fn encode_stacked(
    layers: &[EncoderLayer],
    x: Array2<f32>,
    texts: &[Range<usize>],
    masks: &[Arc<Mask>],
    settings: &Settings,
    records: &mut [RowAttention],
    until: Until,
) -> Result<Vec<Stacked>> {
    let each: Vec<&Mask> = masks.iter().map(|m| m.as_ref()).collect();
    let mut x = x;
    let mut residuals = vec![Vec::new(); texts.len()];
    // the texts are one length, so every record keeps the same
    let keep = records.first().map_or(Kept::Maxima, RowAttention::kept);
    for (i, layer) in layers.iter().enumerate() {
        let last = until.stops_at(i, layers.len());
        let (a, outs) = layer
            .self_attn
            .forward_stacked(x.view(), texts, &each, settings.scale_scores, keep, !last)
            .map_err(|e| in_block(e, (Place::EncoderSelf, i)))?;
        for (((record, out), rows), mask) in records.iter_mut().zip(outs).zip(texts).zip(masks) {
            let input = Arc::new(rows_of(x.view(), rows.clone()));
            record.push_layer(&layer.self_attn, out, mask, LayerInputs { x_q: Arc::clone(&input), x_kv: input });
        }
        if last {
            return Ok(residuals.into_iter().map(|residuals| Stacked { output: None, residuals }).collect());
        }
        let x1 = layer.self_attn_norm.forward_sum(x.view(), a); // (ΣT, D)
        let f = layer.ffn.forward(x1.view())?;
        x = layer.final_norm.forward_sum(x1.view(), f);
        if settings.residuals {
            texts.iter().zip(&mut residuals).for_each(|(rows, kept)| kept.push(rows_of(x.view(), rows.clone())));
        }
    }
    Ok(texts
        .iter()
        .zip(residuals)
        .map(|(rows, residuals)| Stacked { output: Some(rows_of(x.view(), rows.clone())), residuals })
        .collect())
}

/// The masks and records of a decoder stack's two attention places.
pub struct DecoderPlaces<'a> {
    pub self_mask: &'a Arc<Mask>,  // (Tt, Tt)
    pub cross_mask: &'a Arc<Mask>, // (Tt, Ts)
    pub self_record: Option<&'a mut RowAttention>,
    pub cross_record: Option<&'a mut RowAttention>,
}

/// Runs `y` (Tt, D) through a decoder stack attending to `memory` (Ts, D), the encoder
/// output, as `settings` say; gives the decoder output (Tt, D), or none when it runs only
/// `until` the last layer's weights.
pub(crate) fn decode(
    layers: &[DecoderLayer],
    y: Array2<f32>,
    memory: &Arc<Array2<f32>>,
    places: DecoderPlaces,
    settings: &Settings,
    until: Until,
) -> Result<Stacked> {
    let DecoderPlaces { self_mask, cross_mask, mut self_record, mut cross_record } = places;
    let (first, y) = match settings.start_of(Place::DecoderSelf, &y)? {
        Some((layer, begun)) => {
            (self_record, cross_record) = (None, None);
            (layer, begun)
        }
        None => (0, y),
    };
    let mut y = Arc::new(y);
    let mut residuals = Vec::new();
    for (i, layer) in layers.iter().enumerate().skip(first) {
        let last = until.stops_at(i, layers.len());
        if last && cross_record.is_none() {
            // nothing reads this layer's self-attention output: its weights are all
            if let Some(row) = self_record {
                attend_weights(&layer.self_attn, &y, &y, self_mask, settings, (Place::DecoderSelf, i), row)?;
            }
            return Ok(Stacked { output: None, residuals });
        }
        let at = (Place::DecoderSelf, i);
        let a = attend(&layer.self_attn, &y, &y, self_mask, settings, at, self_record.as_deref_mut())?;
        let y1 = Arc::new(layer.self_attn_norm.forward_sum(y.view(), a)); // (Tt, D)
        if let (true, Some(row)) = (last, cross_record.as_deref_mut()) {
            attend_weights(&layer.cross_attn, &y1, memory, cross_mask, settings, (Place::Cross, i), row)?;
            return Ok(Stacked { output: None, residuals });
        }
        let at = (Place::Cross, i);
        let c = attend(&layer.cross_attn, &y1, memory, cross_mask, settings, at, cross_record.as_deref_mut())?;
        let y2 = layer.cross_attn_norm.forward_sum(y1.view(), c);
        let f = layer.ffn.forward(y2.view())?;
        y = Arc::new(layer.final_norm.forward_sum(y2.view(), f));
        if settings.residuals {
            residuals.push(y.as_ref().clone());
        }
    }
    Ok(Stacked { output: Some(Arc::unwrap_or_clone(y)), residuals })
}

/// One decoding step of a decoder stack: the new rows `y` (n, D) at the positions after those
/// `caches` hold, self-attention over and into each layer's cache, cross-attention over the
/// source's (masked by `cross_mask`, (n, Ts)).
#[cfg(feature = "hf")]
pub(crate) fn decode_step(
    layers: &[DecoderLayer],
    mut y: Array2<f32>,
    caches: &mut [LayerCache],
    cross_mask: &Mask,
    settings: &Settings,
) -> Result<Step> {
    let (first, n) = (tokens_read(caches), y.nrows());
    let mask = step_mask(first, n, None);
    let mut rows = StepRows::default();
    for (i, (layer, cache)) in layers.iter().zip(caches.iter_mut()).enumerate() {
        let edits = settings.edits.at(Place::DecoderSelf, i);
        let a = (layer.self_attn)
            .forward_cached(y.view(), &mut cache.own, &mask, settings.scale_scores, &edits)
            .map_err(|e| in_block(e, (Place::DecoderSelf, i)))?;
        let y1 = layer.self_attn_norm.forward_sum(y.view(), a.output); // (n, D)
                                                                       // decoder_caches gives every layer one
        let memory = cache
            .cross
            .as_ref()
            .ok_or_else(|| crate::error::Error::shape("cross-attention's cache", &[0], &[layers.len()]))?;
        let edits = settings.edits.at(Place::Cross, i);
        let c = (layer.cross_attn)
            .forward_over(y1.view(), memory, cross_mask, settings.scale_scores, &edits)
            .map_err(|e| in_block(e, (Place::Cross, i)))?;
        let y2 = layer.cross_attn_norm.forward_sum(y1.view(), c.output);
        let f = layer.ffn.forward(y2.view())?;
        y = layer.final_norm.forward_sum(y2.view(), f);
        rows.decoder.push(a.weights);
        rows.cross.push(c.weights);
    }
    Ok(Step { hidden: y, rows })
}

/// Empty self-attention caches for a decoding, and each layer's cross-attention cache over
/// `memory` (Ts, D), the encoder's output.
#[cfg(feature = "hf")]
pub(crate) fn decoder_caches(layers: &[DecoderLayer], memory: &Array2<f32>) -> Result<Vec<LayerCache>> {
    layers
        .iter()
        .map(|layer| Ok(LayerCache { own: Default::default(), cross: Some(layer.cross_attn.cache_of(memory.view())?) }))
        .collect()
}
