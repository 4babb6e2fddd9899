//! The pre-norm block, written once as nanoGPT writes it, `x = x + attn(ln_1(x));
//! x = x + mlp(ln_2(x))`, for every decoder-only family (GPT-2, GPT-Neo, GPT-NeoX,
//! Llama-style) and both of T5's stacks, whose decoder blocks attend to the encoder between
//! the two:
//!
//! ```text
//! sequential:  x += attn(ln_1(x));  [x += cross(ln_c(x), memory)];  x += mlp(ln_2(x))
//! parallel:    x += attn(ln_1(x)) + mlp(ln_2(x))        (GPT-NeoX's use_parallel_residual)
//! ```

use std::sync::Arc;

use ndarray::Array2;

use super::decoding::{step_mask, tokens_read, LayerCache, Step, StepRows};
use super::network::Stacked;
use crate::attention::mask::Mask;
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::error::Result;
use crate::nn::{Mlp, Norm};
use crate::run::{attend, attend_weights, in_block, RowAttention, Settings, Until};

/// One pre-norm block: self-attention, a decoder's cross-attention, the feed-forward, each
/// after its own norm and added back.
pub(crate) struct PreNormBlock {
    pub ln_1: Norm,
    pub attn: Arc<MultiHeadAttention>,
    /// A decoder block's cross-attention (T5's `EncDecAttention`) and the norm before it.
    pub cross: Option<(Norm, Arc<MultiHeadAttention>)>,
    pub ln_2: Norm,
    pub mlp: Mlp,
    /// Both branches read the block's input (GPT-NeoX's `use_parallel_residual`).
    pub parallel: bool,
}

/// What a decoder stack's cross-attention reads: the encoder output and the mask over it,
/// and where its weights are recorded.
pub(crate) struct Memory<'a> {
    pub states: &'a Arc<Array2<f32>>, // (Ts, D)
    pub mask: &'a Arc<Mask>,          // (Tt, Ts)
    pub record: Option<&'a mut RowAttention>,
}

impl PreNormBlock {
    /// The block on the residual stream `x` (T, D), in place; `at` is where its
    /// self-attention is (its place and layer), which the settings' edits are looked up by.
    fn forward(
        &self,
        x: &mut Array2<f32>,
        mask: &Arc<Mask>,
        (settings, at): (&Settings, (Place, usize)),
        record: Option<&mut RowAttention>,
        memory: Option<&mut Memory>,
    ) -> Result<()> {
        let h = Arc::new(self.ln_1.forward(x.view())); // (T, D)
        let a = attend(&self.attn, &h, &h, mask, settings, at, record)?;
        if self.parallel {
            // both branches read the same x
            let m = self.mlp.forward(self.ln_2.forward(x.view()).view())?;
            *x += &a;
            *x += &m;
            return Ok(());
        }
        *x += &a;
        if let (Some((norm, cross)), Some(memory)) = (&self.cross, memory) {
            let h = Arc::new(norm.forward(x.view())); // (Tt, D)
            let cross_at = (Place::Cross, at.1);
            *x += &attend(cross, &h, memory.states, memory.mask, settings, cross_at, memory.record.as_deref_mut())?;
        }
        let m = self.mlp.forward(self.ln_2.forward(x.view()).view())?;
        *x += &m;
        Ok(())
    }

    /// One decoding step of the new rows `x` (n, D), in place: self-attention over and into
    /// `cache.own` with `mask`, a decoder's cross-attention over `cache.cross` with
    /// `cross_mask`; their weights are pushed onto `rows`.
    fn step(
        &self,
        x: &mut Array2<f32>,
        cache: &mut LayerCache,
        (mask, cross_mask): (&Mask, Option<&Mask>),
        (settings, at): (&Settings, (Place, usize)),
        rows: &mut StepRows,
    ) -> Result<()> {
        let h = self.ln_1.forward(x.view()); // (n, D)
        let edits = settings.edits.at(at.0, at.1);
        let a = (self.attn)
            .forward_cached(h.view(), &mut cache.own, mask, settings.scale_scores, &edits)
            .map_err(|e| in_block(e, at))?;
        rows.decoder.push(a.weights);
        if self.parallel {
            let m = self.mlp.forward(self.ln_2.forward(x.view()).view())?;
            *x += &a.output;
            *x += &m;
            return Ok(());
        }
        *x += &a.output;
        if let (Some((norm, cross)), Some(kv), Some(cross_mask)) = (&self.cross, &cache.cross, cross_mask) {
            let h = norm.forward(x.view()); // (n, D)
            let edits = settings.edits.at(Place::Cross, at.1);
            let c = (cross.forward_over(h.view(), kv, cross_mask, settings.scale_scores, &edits))
                .map_err(|e| in_block(e, (Place::Cross, at.1)))?;
            rows.cross.push(c.weights);
            *x += &c.output;
        }
        let m = self.mlp.forward(self.ln_2.forward(x.view()).view())?;
        *x += &m;
        Ok(())
    }

    /// The last block of a stack whose output nothing reads: only the weights a run keeps.
    /// Self-attention's weights alone, unless cross-attention's are kept: then self-attention
    /// runs whole and cross-attention stops at its weights.
    fn last_weights(
        &self,
        x: &Array2<f32>,
        mask: &Arc<Mask>,
        (settings, at): (&Settings, (Place, usize)),
        record: Option<&mut RowAttention>,
        memory: Option<&mut Memory>,
    ) -> Result<()> {
        let h = Arc::new(self.ln_1.forward(x.view())); // (T, D)
        match (&self.cross, memory) {
            (Some((norm, cross)), Some(Memory { states, mask: cross_mask, record: Some(cross_record) })) => {
                let x = x + &attend(&self.attn, &h, &h, mask, settings, at, record)?;
                let h = Arc::new(norm.forward(x.view())); // (Tt, D)
                attend_weights(cross, &h, states, cross_mask, settings, (Place::Cross, at.1), cross_record)
            }
            _ => match record {
                Some(row) => attend_weights(&self.attn, &h, &h, mask, settings, at, row),
                None => Ok(()),
            },
        }
    }
}

/// Pre-norm blocks and the norm after the last (`ln_f`, `final_layer_norm`, `norm`).
pub(crate) struct PreNormStack {
    /// Where the blocks' self-attention is: the decoder's, or T5's encoder's.
    pub place: Place,
    pub blocks: Vec<PreNormBlock>,
    pub final_norm: Norm,
}

impl PreNormStack {
    /// Runs `x` (T, D) through the blocks as `settings` say, block i's self-attention masked
    /// by `masks[i]` and recorded in `record`, a decoder's cross-attention reading `memory`;
    /// then the final norm. Gives the stack's output, or none when it runs only `until` its
    /// last block's weights; the residual stream after each block is before the final norm.
    /// A stack the settings begin partway ([`crate::run::Start`]) records nothing.
    pub fn run(
        &self,
        mut x: Array2<f32>,
        masks: &[Arc<Mask>],
        settings: &Settings,
        mut record: Option<&mut RowAttention>,
        mut memory: Option<Memory>,
        until: Until,
    ) -> Result<Stacked> {
        let n = self.blocks.len();
        let mut residuals = Vec::new();
        let first = match settings.start_of(self.place, &x)? {
            Some((layer, begun)) => {
                (x, record) = (begun, None);
                layer
            }
            None => 0,
        };
        for (i, (block, mask)) in self.blocks.iter().zip(masks).enumerate().skip(first) {
            let how = (settings, (self.place, i));
            if until.stops_at(i, n) {
                block.last_weights(&x, mask, how, record, memory.as_mut())?;
                return Ok(Stacked { output: None, residuals });
            }
            block.forward(&mut x, mask, how, record.as_deref_mut(), memory.as_mut())?;
            if settings.residuals {
                residuals.push(x.clone());
            }
        }
        Ok(Stacked { output: Some(self.final_norm.forward(x.view())), residuals })
    }

    /// One decoding step of the new rows `x` (n, D) at the positions after those `caches`
    /// hold: block i windowed to `windows[i]` keys where it has a window, a decoder's
    /// cross-attention masked by `cross_mask` (n, Ts). Ends with the final norm.
    pub(crate) fn step(
        &self,
        mut x: Array2<f32>,
        caches: &mut [LayerCache],
        windows: &[Option<usize>],
        cross_mask: Option<&Mask>,
        settings: &Settings,
    ) -> Result<Step> {
        let (first, n) = (tokens_read(caches), x.nrows());
        let mut masks: Vec<(Option<usize>, Mask)> = Vec::new(); // one per distinct window
        let mut rows = StepRows::default();
        for (i, (block, cache)) in self.blocks.iter().zip(caches.iter_mut()).enumerate() {
            let window = windows.get(i).copied().flatten();
            let at = match masks.iter().position(|(w, _)| *w == window) {
                Some(at) => at,
                None => {
                    masks.push((window, step_mask(first, n, window)));
                    masks.len() - 1
                }
            };
            let mask = &masks[at].1;
            block.step(&mut x, cache, (mask, cross_mask), (settings, (self.place, i)), &mut rows)?;
        }
        Ok(Step { hidden: self.final_norm.forward(x.view()), rows })
    }

    /// Empty caches for a decoding, with cross-attention's over `memory` (Ts, D) in a decoder
    /// that reads an encoder.
    pub(crate) fn caches(&self, memory: Option<&Array2<f32>>) -> Result<Vec<LayerCache>> {
        self.blocks
            .iter()
            .map(|block| {
                let cross = match (&block.cross, memory) {
                    (Some((_, cross)), Some(m)) => Some(cross.cache_of(m.view())?),
                    _ => None,
                };
                Ok(LayerCache { own: Default::default(), cross })
            })
            .collect()
    }
}
