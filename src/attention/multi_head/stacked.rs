//! Self-attention of several texts at once, their tokens stacked in one (ΣT, D) matrix: the
//! projections W_Q, W_K, W_V and W_O read the weights once for every text instead of once
//! per text, while each text's heads attend over its own tokens alone. Every product treats
//! each row alike, so a text's weights and output have the bits of its own run.

use std::ops::Range;

use ndarray::{s, Array2, ArrayView2, CowArray};

use super::heads::{Keep, Projected};
use super::{Kept, MultiHeadAttention, MultiHeadOutput};
use crate::attention::mask::Mask;
use crate::error::{Error, Result};

impl MultiHeadAttention {
    /// Whether texts can share this block's products: not when positions enter inside the
    /// block (rotated Q and K, a bias on the scores), which depend on where a text starts.
    pub fn stacks(&self) -> bool {
        !self.positions.rotates() && self.positions.buckets(0, 1, 1).is_none()
    }

    /// Self-attention of the texts whose tokens are rows `texts` of `x` (ΣT, D), each with its
    /// own `masks` entry: every text's weights (as `keep` says) and maxima, and with `values`
    /// the block's output, (ΣT, D), stacked as `x` is; without, (ΣT, 0).
    pub fn forward_stacked(
        &self,
        x: ArrayView2<f32>,
        texts: &[Range<usize>],
        masks: &[&Mask],
        scale_scores: bool,
        keep: Kept,
        values: bool,
    ) -> Result<(Array2<f32>, Vec<MultiHeadOutput>)> {
        if !self.stacks() || masks.len() != texts.len() || texts.last().is_some_and(|t| t.end > x.nrows()) {
            return Err(Error::shape("stacked texts", &[texts.len(), x.nrows()], &[masks.len(), x.nrows()]));
        }
        let (q, k) = self.project_unrotated(x, x)?; // (ΣT, H·d_k), (ΣT, KV·d_k)
        let v = if values { Some(self.w_v.forward(x)?) } else { None }; // (ΣT, KV·d_k)
        let mut heads_out = Array2::zeros((x.nrows(), if values { self.heads * self.head_dim } else { 0 }));
        let mut outs = Vec::with_capacity(texts.len());
        for (rows, mask) in texts.iter().zip(masks) {
            let p = Projected {
                q: q.slice(s![rows.clone(), ..]).to_owned(),
                k: CowArray::from(k.slice(s![rows.clone(), ..])),
                v: v.as_ref().map(|v| CowArray::from(v.slice(s![rows.clone(), ..]))),
                first: 0,
            };
            let mut out = self.heads(&p, Some(mask), scale_scores, Keep { weights: keep, values })?;
            heads_out.slice_mut(s![rows.clone(), ..]).assign(&out.output);
            out.output = Array2::zeros((rows.len(), 0));
            outs.push(out);
        }
        let output = if values { self.w_o.forward(heads_out.view())? } else { heads_out }; // (ΣT, D)
        Ok((output, outs))
    }
}

/// The rows of `x` (ΣT, D) that hold text `rows`, as a matrix of its own.
pub fn rows_of(x: ArrayView2<f32>, rows: Range<usize>) -> Array2<f32> {
    x.slice(s![rows, ..]).to_owned()
}
