//! The KV cache: what a decoder keeps of the tokens it has read, so that writing the next one
//! runs only that token through each layer.
//!
//! ```text
//! without a cache   step n: Q, K, V of all n tokens, scores n × n     ≈ n² · d multiply-adds
//! with a cache      step n: q, k, v of the new token, k and v kept;
//!                   scores 1 × n against every kept key                ≈ n · d
//! ```
//!
//! The keys are kept as the scores read them, already turned by their positions in a rotary
//! block; a relative-bias block (T5) places the new query at its position among the keys. The
//! new token's weights are the last row of the full run's: nothing else changes.

use ndarray::{concatenate, Array2, ArrayView2, Axis};

use super::heads::{Keep, Projected};
use super::{HeadEdit, Kept, MultiHeadAttention, MultiHeadOutput};
use crate::attention::mask::Mask;
use crate::error::{Error, Result};

/// One attention block's keys and values of every token read so far, (T, KV·d_k) each.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KvCache {
    keys: Array2<f32>,
    values: Array2<f32>,
}

impl KvCache {
    /// Tokens kept.
    pub fn len(&self) -> usize {
        self.keys.nrows()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The keys as the scores read them (rotated in a rotary block), (T, KV·d_k).
    pub fn keys(&self) -> ArrayView2<'_, f32> {
        self.keys.view()
    }

    /// (T, KV·d_k).
    pub fn values(&self) -> ArrayView2<'_, f32> {
        self.values.view()
    }

    /// Bytes the cache holds: what a reader is shown next to the cost it saves.
    pub fn bytes(&self) -> usize {
        (self.keys.len() + self.values.len()) * std::mem::size_of::<f32>()
    }

    fn append(&mut self, keys: Array2<f32>, values: Array2<f32>) -> Result<()> {
        if self.is_empty() {
            (self.keys, self.values) = (keys, values);
            return Ok(());
        }
        let joined = |kept: &Array2<f32>, new: &Array2<f32>| {
            concatenate(Axis(0), &[kept.view(), new.view()])
                .map_err(|_| Error::shape("a cached token", &[new.nrows(), new.ncols()], &[new.nrows(), kept.ncols()]))
        };
        self.keys = joined(&self.keys, &keys)?;
        self.values = joined(&self.values, &values)?;
        Ok(())
    }
}

impl MultiHeadAttention {
    /// Self-attention of new rows `x` (n, D) at positions `cache.len()..`: their keys and values
    /// join `cache`, and their queries read every key kept, `mask` (n, T + n) saying which.
    /// Every head's weights are kept, (H, n, T + n); `edits` change heads' outputs as in
    /// [`MultiHeadAttention::forward_edited`].
    pub fn forward_cached(
        &self,
        x: ArrayView2<f32>,
        cache: &mut KvCache,
        mask: &Mask,
        scale_scores: bool,
        edits: &[(usize, &HeadEdit)],
    ) -> Result<MultiHeadOutput> {
        let first = cache.len();
        let (mut q, mut k) = self.project_unrotated(x, x)?;
        self.positions.rotate_from(&mut q, &mut k, self.head_dim, first)?;
        let v = self.w_v.forward(x)?; // (n, KV·d_k)
        cache.append(k, v)?;
        self.over_cache(q, cache, first, mask, scale_scores, edits)
    }

    /// The keys and values of a fixed input (Ts, D), the encoder's output that cross-attention
    /// reads at every step: computed once.
    pub fn cache_of(&self, memory: ArrayView2<f32>) -> Result<KvCache> {
        let (mut q, mut k) = self.project_unrotated(memory.slice(ndarray::s![..0, ..]), memory)?;
        self.positions.rotate(&mut q, &mut k, self.head_dim)?;
        let v = self.w_v.forward(memory)?;
        Ok(KvCache { keys: k, values: v })
    }

    /// Cross-attention of new rows `x` (n, D) over a fixed `cache` ([`Self::cache_of`]),
    /// `mask` (n, Ts).
    pub fn forward_over(
        &self,
        x: ArrayView2<f32>,
        cache: &KvCache,
        mask: &Mask,
        scale_scores: bool,
        edits: &[(usize, &HeadEdit)],
    ) -> Result<MultiHeadOutput> {
        let (q, _) = self.project_unrotated(x, x.slice(ndarray::s![..0, ..]))?;
        self.over_cache(q, cache, 0, mask, scale_scores, edits)
    }

    fn over_cache(
        &self,
        q: Array2<f32>,
        cache: &KvCache,
        first: usize,
        mask: &Mask,
        scale_scores: bool,
        edits: &[(usize, &HeadEdit)],
    ) -> Result<MultiHeadOutput> {
        let p = Projected { q, k: cache.keys.view().into(), v: Some(cache.values.view().into()), first };
        let out = self.heads(&p, Some(mask), scale_scores, Keep { weights: Kept::Weights, values: true })?;
        self.write(out, edits)
    }
}
