//! The loop decoder-only models (GPT-2, GPT-Neo, GPT-NeoX, Llama-style) share: each row through
//! the family's own pre-norm blocks, each layer with its mask — causal, narrowed to a window in
//! the layers that have one.

use std::sync::Arc;

use ndarray::Array2;

use super::network::place_mask;
use super::run::{Batch, Hidden, PlaceInfo, PlaceRun, Row, RowAttention, Run, Settings};
use crate::attention::mask::Mask;
use crate::error::Result;

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
