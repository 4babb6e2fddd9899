//! One pass over a block's heads: QKᵀ → scale → bias → mask → softmax (→ ·V) for each, on
//! one thread or spread over the threads there are ([`crate::par`]).

use std::mem::MaybeUninit;

use ndarray::{Array2, Array3, ArrayView2, ArrayViewMut2, Axis, CowArray, Ix2};
#[cfg(feature = "hf")]
use rayon::prelude::*;

use super::{MultiHeadAttention, MultiHeadOutput};
use crate::attention::mask::Mask;
use crate::attention::sdpa::{self, HeadWeights, ScoreSteps};
use crate::error::{ensure_finite, Error, Result};
use crate::{par, stats};

/// What a pass over the heads keeps of their weights, besides each head's largest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kept {
    /// Every head's weights, (H, Tq, Tk).
    Weights,
    /// Each head's weights max-pooled to (rows, columns) pixels ([`crate::stats::max_pool`])
    /// while they are still in memory, and then let go: a text too long to keep its weights
    /// shows every head as a thumbnail without computing its layers again.
    Pooled(usize, usize),
    /// Nothing: each head's weights live only while the head is computed.
    Maxima,
}

/// What a pass over the heads gives besides each head's largest weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Keep {
    /// Every head's weights (H, Tq, Tk), a picture of each, or nothing: each head's weights
    /// then live only while the head is computed.
    pub weights: Kept,
    /// The heads' outputs, weights · V: without them V and W_O are not computed at all.
    pub values: bool,
}

/// Q, K and V of a block, every head side by side, rotated when the block rotates: computed
/// from the block's inputs, or K and V borrowed from a KV cache.
pub(super) struct Projected<'a> {
    pub q: Array2<f32>,                    // (Tq, H·d_k)
    pub k: CowArray<'a, f32, Ix2>,         // (Tk, KV·d_k)
    pub v: Option<CowArray<'a, f32, Ix2>>, // (Tk, KV·d_k), when the values are needed
    /// The position of the first query: 0, or the tokens a KV cache held before this step.
    pub first: usize,
}

/// What every head of one pass shares.
struct Pass<'a, 'k> {
    p: &'a Projected<'k>,
    mask: Option<&'a Mask>,
    divisor: f32,
    buckets: Option<Array2<usize>>, // (Tq, Tk), T5's relative positions
    /// Per query, the keys the mask lets it see, when leaving out the rest pays (causal masks).
    reach: Option<Vec<usize>>,
    /// The (rows, columns) each head's weights are max-pooled to, if any ([`Kept::Pooled`]).
    pool: Option<(usize, usize)>,
}

/// What one head gives: what its weights say, and their picture when the pass pools.
type Head = (HeadWeights, Option<Array2<f32>>);

impl MultiHeadAttention {
    /// Attends head by head over projected `p`: every head's weights written straight into
    /// one (H, Tq, Tk) buffer (or one head's worth, reused, when they are not kept), and with
    /// values each head's output into its columns of (Tq, H·d_k), before W_O.
    pub(super) fn heads(
        &self,
        p: &Projected,
        mask: Option<&Mask>,
        scale_scores: bool,
        keep: Keep,
    ) -> Result<MultiHeadOutput> {
        let (tq, tk, d_k) = (p.q.nrows(), p.k.nrows(), self.head_dim);
        // once per layer rather than per head: a NaN or ∞ in Q, K or V is an error, never a heatmap
        ensure_finite("Q", p.q.view())?;
        ensure_finite("K", p.k.view())?;
        if let Some(v) = &p.v {
            ensure_finite("V", v.view())?;
        }
        let Keep { weights: keeps, values } = keep;
        let kept = keeps == Kept::Weights;
        let pass = Pass {
            p,
            mask,
            divisor: self.score_scale.divisor(d_k, scale_scores),
            buckets: self.positions.buckets(p.first, tq, tk),
            reach: sdpa::reach_of(mask, tq, tk),
            pool: match keeps {
                Kept::Pooled(rows, columns) => Some((rows, columns)),
                _ => None,
            },
        };
        let n = tq * tk;
        // (H, Tq, Tk) or (Tq, Tk), each head's slot written whole by `sdpa::weights_into`
        let len = if kept { self.heads * n } else { n };
        let mut weights: Vec<f32> = Vec::with_capacity(len);
        let slots = &mut weights.spare_capacity_mut()[..len];
        let mut heads_out = Array2::zeros((tq, if values { self.heads * d_k } else { 0 })); // (Tq, H·d_k)
                                                                                            // each head's columns of the output (none without values), one per head even at d_k 0
        let columns: Vec<Option<ArrayViewMut2<f32>>> = match values {
            true if d_k > 0 => heads_out.axis_chunks_iter_mut(Axis(1), d_k).map(Some).collect(),
            _ => (0..self.heads).map(|_| None).collect(),
        };
        let spread = n > 0
            && self.heads > 1
            && par::threads() > 1
            && !par::helping()
            && par::worth_splitting(self.heads.saturating_mul(n).saturating_mul(d_k), par::HEADS_SPLIT_FLOPS);
        let done = if spread {
            par::all(self.heads_spread(&pass, slots, columns, kept))?
        } else {
            let mut scores = Vec::with_capacity(n); // (Tq, Tk), every head's QKᵀ in turn
            let mut each = |(h, dest)| {
                let slot = if kept { &mut slots[h * n..(h + 1) * n] } else { &mut slots[..] };
                self.head(&pass, h, &mut scores, slot, dest)
            };
            columns.into_iter().enumerate().map(&mut each).collect::<Result<Vec<_>>>()?
        };
        let maxima = done.iter().map(|(h, _)| h.max).collect();
        let pooled = pictures(pass.pool, &done)?;
        // the mask's fully masked queries are the same for every head
        let fully_masked_rows = done.into_iter().last().map(|(h, _)| h.fully_masked_rows).unwrap_or_default();
        let weights = if kept {
            // SAFETY: every head succeeded, and each wrote its whole slot: the H slots of n
            // values that make up `len`
            unsafe { weights.set_len(len) };
            Array3::from_shape_vec((self.heads, tq, tk), weights)
                .map_err(|_| Error::shape("weights", &[self.heads * n], &[self.heads, tq, tk]))?
        } else {
            Array3::zeros((0, 0, 0))
        };
        Ok(MultiHeadOutput { output: heads_out, weights, maxima, fully_masked_rows, pooled })
    }

    /// The heads on the threads: each with its own scores, its own slice of the kept weights
    /// (or a head's worth of its own) and its own columns of the output.
    #[cfg(feature = "hf")]
    fn heads_spread(
        &self,
        pass: &Pass<'_, '_>,
        weights: &mut [MaybeUninit<f32>],
        columns: Vec<Option<ArrayViewMut2<f32>>>,
        kept: bool,
    ) -> Vec<Result<Head>> {
        let n = pass.p.q.nrows() * pass.p.k.nrows();
        if par::helped() {
            // work with helpers: the heads go to them through `par`, which rayon's own split
            // would pass by; a head's scratch is its own (freed memory the next head reuses)
            let jobs: Vec<_> = match kept {
                true => weights.chunks_mut(n).map(Some).zip(columns).enumerate().collect(),
                false => columns.into_iter().map(|dest| (None, dest)).enumerate().collect(),
            };
            return par::map_owned(jobs, |(h, (slot, dest))| {
                let mut own;
                let slot = match slot {
                    Some(slot) => slot,
                    None => {
                        own = vec![MaybeUninit::uninit(); n];
                        &mut own[..]
                    }
                };
                self.head(pass, h, &mut Vec::new(), slot, dest)
            });
        }
        if kept {
            let jobs: Vec<_> = weights.chunks_mut(n).zip(columns).enumerate().collect();
            jobs.into_par_iter()
                .map_init(Vec::new, |scores, (h, (slot, dest))| self.head(pass, h, scores, slot, dest))
                .collect()
        } else {
            columns
                .into_par_iter()
                .enumerate()
                .map_init(
                    || (Vec::new(), vec![MaybeUninit::uninit(); n]),
                    |(scores, slot), (h, dest)| self.head(pass, h, scores, slot, dest),
                )
                .collect()
        }
    }
    #[cfg(not(feature = "hf"))]
    fn heads_spread(
        &self,
        _: &Pass<'_, '_>,
        _: &mut [MaybeUninit<f32>],
        _: Vec<Option<ArrayViewMut2<f32>>>,
        _: bool,
    ) -> Vec<Result<Head>> {
        unreachable!("the toy-only build has one thread")
    }

    /// Head `h`: its weights into `slot` (Tq, Tk), with `scores` as scratch, with values
    /// weights · V into `dest` (Tq, d_k), and their picture when the pass pools.
    fn head(
        &self,
        pass: &Pass<'_, '_>,
        h: usize,
        scores: &mut Vec<f32>,
        slot: &mut [MaybeUninit<f32>],
        dest: Option<ArrayViewMut2<f32>>,
    ) -> Result<Head> {
        let bias = self.positions.head_bias(h, pass.buckets.as_ref());
        if let Some(b) = &bias {
            ensure_finite("position bias", b.view())?;
        }
        let steps = ScoreSteps { divisor: pass.divisor, bias: bias.as_ref().map(|b| b.view()) };
        let (q, k, v) = self.head_slices(pass.p, h);
        sdpa::check_shapes(q, k, v, pass.mask, steps.bias)?;
        let reach = pass.reach.as_deref();
        let (head, slot) = sdpa::weights_into(q, k, pass.mask, steps, scores, slot, reach)?;
        // this head's weights were just written, still in cache
        let w = ArrayView2::from_shape((q.nrows(), k.nrows()), &*slot)
            .map_err(|_| Error::shape("weights", &[slot.len()], &[q.nrows(), k.nrows()]))?;
        if let (Some(v), Some(mut dest)) = (v, dest) {
            sdpa::values_reaching(w, v, reach, &mut dest); // (Tq, d_k)
        }
        // pooled as a view pools a head it computes again (`RowAttention::pooled`), value for
        // value; the toy-only build never pools ahead, and its download leaves this out
        let pool = pass.pool.filter(|_| cfg!(feature = "hf"));
        let picture = pool.map(|(rows, columns)| stats::max_pool(w, pass.mask.map(Mask::allowed), rows, columns));
        Ok((head, picture))
    }
}

/// Every head's picture (H, rows, columns) from the heads of a pass that pooled them.
#[cfg(feature = "hf")]
fn pictures(pool: Option<(usize, usize)>, done: &[Head]) -> Result<Option<Array3<f32>>> {
    let Some((rows, columns)) = pool else { return Ok(None) };
    let heads = done.len();
    let all: Vec<f32> = done.iter().flat_map(|(_, picture)| picture.iter().flatten().copied()).collect();
    let pictures = Array3::from_shape_vec((heads, rows, columns), all)
        .map_err(|_| Error::shape("pooled heads", &[heads * rows * columns], &[heads, rows, columns]))?;
    Ok(Some(pictures))
}

#[cfg(not(feature = "hf"))]
fn pictures(_: Option<(usize, usize)>, _: &[Head]) -> Result<Option<Array3<f32>>> {
    Ok(None)
}
