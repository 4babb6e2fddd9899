//! Multi-head attention, §3.2.2 of the paper:
//! `MultiHead(X_Q, X_KV) = Concat(head_1, …, head_h) W_O`,
//! `head_i = Attention(X_Q W_Q[:, i], X_KV W_K[:, i], X_KV W_V[:, i])`.
//!
//! Each head takes its own slice of d_k = d_model / h columns of the projections, so h heads
//! cost about what one full-width head costs (h · n² · d/h = n² d).

use std::sync::Arc;

use ndarray::{s, Array1, Array2, Array3, ArrayView2, ArrayView3};

use super::mask::Mask;
use super::position::PositionScheme;
use super::sdpa::{self, ScoreScale, ScoreSteps, Trace};
use crate::error::{Error, Result};
use crate::nn::Linear;
pub use cache::KvCache;
pub use heads::Kept;
use heads::{Keep, Projected};
pub use stacked::rows_of;
pub use writes::HeadWrites;

mod cache;
mod heads;
mod stacked;
mod writes;

/// The four projections of one attention block, and what the model does between them.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiHeadAttention {
    pub w_q: Linear, // (D, H·d_k)
    pub w_k: Linear, // (D, KV·d_k)
    pub w_v: Linear, // (D, KV·d_k)
    pub w_o: Linear, // (H·d_k, D)
    pub heads: usize,
    /// Key/value heads (grouped-query attention): query head h reads K/V head
    /// h / (heads / kv_heads). Equal to `heads` in the paper's attention.
    pub kv_heads: usize,
    /// d_k, the width of one head: D / H in the paper, set on its own by Llama-style and T5
    /// models.
    pub head_dim: usize,
    /// What the scores are divided by.
    pub score_scale: ScoreScale,
    /// Where tokens are inside the block: nowhere, rotated Q and K, or a bias on the scores.
    pub positions: PositionScheme,
}

/// How many heads of which width a block has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadShape {
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
}

/// The block's output with the weights of every head.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiHeadOutput {
    pub output: Array2<f32>,  // (Tq, D), after W_O
    pub weights: Array3<f32>, // (H, Tq, Tk)
    /// Each head's largest weight, (H,): what a view's colour range needs, kept even when the
    /// weights are not.
    pub maxima: Vec<f32>,
    pub fully_masked_rows: Vec<usize>,
    /// Each head's weights max-pooled to a picture, (H, rows, columns), with [`Kept::Pooled`].
    pub pooled: Option<Array3<f32>>,
}

/// What happens to one head's output, weights · V (Tq, d_k), before W_O reads it: the place
/// TransformerLens hooks as `hook_z`. W_O's bias is not a head's and stays.
#[derive(Debug, Clone, PartialEq)]
pub enum HeadEdit {
    /// Zero-ablation: the head writes nothing.
    Zero,
    /// The same output at every position (mean-ablation: its mean over real tokens), (d_k,).
    Constant(Arc<Array1<f32>>),
    /// Another run's output of this head at every position (activation patching), (Tq, d_k).
    Output(Arc<Array2<f32>>),
}

impl HeadEdit {
    /// Writes the edit over one head's columns `z` (Tq, d_k).
    fn apply(&self, mut z: ndarray::ArrayViewMut2<f32>) -> Result<()> {
        match self {
            HeadEdit::Zero => z.fill(0.0),
            HeadEdit::Constant(c) if c.len() == z.ncols() => z.rows_mut().into_iter().for_each(|mut r| r.assign(c)),
            HeadEdit::Output(o) if o.dim() == z.dim() => z.assign(o),
            HeadEdit::Constant(c) => return Err(Error::shape("a head's mean output", &[c.len()], &[z.ncols()])),
            HeadEdit::Output(o) => {
                return Err(Error::shape("a patched head's output", &[o.nrows(), o.ncols()], &[z.nrows(), z.ncols()]))
            }
        }
        Ok(())
    }
}

/// One head's trace, from the block's inputs through its slices of Q, K and V to its output
/// before W_O.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadTrace {
    pub x_q: Array2<f32>,  // (Tq, D)
    pub x_kv: Array2<f32>, // (Tk, D)
    pub q: Array2<f32>,    // (Tq, d_k), before any rotation
    pub k: Array2<f32>,    // (Tk, d_k), before any rotation
    pub v: Array2<f32>,    // (Tk, d_k)
    /// Q and K turned by their positions (rotary models): what the scores are made of.
    pub q_rotated: Option<Array2<f32>>, // (Tq, d_k)
    pub k_rotated: Option<Array2<f32>>, // (Tk, d_k)
    /// The key/value head this query head reads (itself unless grouped-query).
    pub kv_head: usize,
    pub steps: Trace,
}

impl MultiHeadAttention {
    /// The paper's block: four (D, D) projections, `heads` heads of D / heads, ÷√d_k.
    pub fn new(w_q: Linear, w_k: Linear, w_v: Linear, w_o: Linear, heads: usize) -> Result<Self> {
        let d = w_q.d_in();
        if heads == 0 || !d.is_multiple_of(heads) {
            return Err(Error::HeadsDoNotDivide { d_model: d, heads });
        }
        Self::with_shape(w_q, w_k, w_v, w_o, HeadShape { heads, kv_heads: heads, head_dim: d / heads })
    }

    /// A block of any head shape: `heads` query heads of `head_dim` over `kv_heads` key/value
    /// heads, ÷√d_k until [`MultiHeadAttention::with_score_scale`] says otherwise, no positions
    /// until [`MultiHeadAttention::with_positions`] gives a scheme.
    pub fn with_shape(w_q: Linear, w_k: Linear, w_v: Linear, w_o: Linear, shape: HeadShape) -> Result<Self> {
        let HeadShape { heads, kv_heads, head_dim } = shape;
        let d = w_q.d_in();
        if heads == 0 || kv_heads == 0 || heads % kv_heads != 0 {
            return Err(Error::KvHeadsDoNotDivide { heads, kv_heads });
        }
        let (inner, kv_inner) = (heads * head_dim, kv_heads * head_dim);
        for (name, lin, want) in [
            ("W_Q", &w_q, (d, inner)),
            ("W_K", &w_k, (d, kv_inner)),
            ("W_V", &w_v, (d, kv_inner)),
            ("W_O", &w_o, (inner, d)),
        ] {
            if lin.weight.dim() != want {
                return Err(Error::shape(name, &[lin.d_in(), lin.d_out()], &[want.0, want.1]));
            }
        }
        Ok(MultiHeadAttention {
            w_q,
            w_k,
            w_v,
            w_o,
            heads,
            kv_heads,
            head_dim,
            score_scale: ScoreScale::SqrtDk,
            positions: PositionScheme::None,
        })
    }

    /// The same block, its scores divided as `score_scale` says.
    pub fn with_score_scale(self, score_scale: ScoreScale) -> Self {
        MultiHeadAttention { score_scale, ..self }
    }

    /// The same block, saying where tokens are as `positions` does.
    pub fn with_positions(self, positions: PositionScheme) -> Self {
        MultiHeadAttention { positions, ..self }
    }

    pub fn d_model(&self) -> usize {
        self.w_q.d_in()
    }

    pub fn d_k(&self) -> usize {
        self.head_dim
    }

    /// The key/value head query head `head` reads.
    pub fn kv_head(&self, head: usize) -> usize {
        head / (self.heads / self.kv_heads)
    }

    /// Queries from `x_q` (Tq, D), keys and values from `x_kv` (Tk, D): the same rows for
    /// self-attention, the encoder output for cross-attention. `scale_scores` false is a what-if
    /// without the block's scaling.
    pub fn forward(
        &self,
        x_q: ArrayView2<f32>,
        x_kv: ArrayView2<f32>,
        mask: Option<&Mask>,
        scale_scores: bool,
    ) -> Result<MultiHeadOutput> {
        self.run(x_q, x_kv, mask, scale_scores, Kept::Weights, &[])
    }

    /// [`MultiHeadAttention::forward`] (or its lean form, keeping less than every weight) with
    /// some heads' outputs changed before W_O: `edits` pairs a head with what it writes instead.
    pub fn forward_edited(
        &self,
        x_q: ArrayView2<f32>,
        x_kv: ArrayView2<f32>,
        mask: Option<&Mask>,
        scale_scores: bool,
        keep: Kept,
        edits: &[(usize, &HeadEdit)],
    ) -> Result<MultiHeadOutput> {
        self.run(x_q, x_kv, mask, scale_scores, keep, edits)
    }

    /// Every head's output before W_O, weights · V side by side, (Tq, H·d_k): head h in
    /// columns h·d_k..(h+1)·d_k. What mean-ablation averages and patching copies.
    pub fn head_outputs(
        &self,
        x_q: ArrayView2<f32>,
        x_kv: ArrayView2<f32>,
        mask: Option<&Mask>,
        scale_scores: bool,
    ) -> Result<Array2<f32>> {
        let p = self.project(x_q, x_kv, true)?;
        Ok(self.heads(&p, mask, scale_scores, Keep { weights: Kept::Maxima, values: true })?.output)
    }

    /// The block's output (Tq, D) and each head's largest weight, with empty weights: no
    /// head's weights outlive its own step.
    pub fn forward_lean(
        &self,
        x_q: ArrayView2<f32>,
        x_kv: ArrayView2<f32>,
        mask: Option<&Mask>,
        scale_scores: bool,
    ) -> Result<MultiHeadOutput> {
        self.run(x_q, x_kv, mask, scale_scores, Kept::Maxima, &[])
    }

    /// Each head's largest weight and what `keep` says of its weights, without V, ·V or W_O:
    /// the output comes back empty, (Tq, 0). What the last layer of a stack whose output
    /// nobody reads needs.
    pub fn forward_weights(
        &self,
        x_q: ArrayView2<f32>,
        x_kv: ArrayView2<f32>,
        mask: Option<&Mask>,
        scale_scores: bool,
        keep: Kept,
    ) -> Result<MultiHeadOutput> {
        let p = self.project(x_q, x_kv, false)?;
        self.heads(&p, mask, scale_scores, Keep { weights: keep, values: false })
    }

    /// Every head's weights (H, Tq, Tk) alone, without ·V or W_O: what a view draws.
    pub fn weights(
        &self,
        x_q: ArrayView2<f32>,
        x_kv: ArrayView2<f32>,
        mask: Option<&Mask>,
        scale_scores: bool,
    ) -> Result<Array3<f32>> {
        Ok(self.forward_weights(x_q, x_kv, mask, scale_scores, Kept::Weights)?.weights)
    }

    /// Projects, attends head by head, concatenates, edits the heads `edits` names and applies
    /// W_O; the weights come back empty, (0, 0, 0), unless `keep` keeps them.
    fn run(
        &self,
        x_q: ArrayView2<f32>,
        x_kv: ArrayView2<f32>,
        mask: Option<&Mask>,
        scale_scores: bool,
        keep: Kept,
        edits: &[(usize, &HeadEdit)],
    ) -> Result<MultiHeadOutput> {
        let p = self.project(x_q, x_kv, true)?;
        let out = self.heads(&p, mask, scale_scores, Keep { weights: keep, values: true })?; // (Tq, H·d_k)
        self.write(out, edits)
    }

    /// Edits the heads `edits` names in the heads' outputs (Tq, H·d_k) and applies W_O.
    fn write(&self, mut out: MultiHeadOutput, edits: &[(usize, &HeadEdit)]) -> Result<MultiHeadOutput> {
        let d = self.head_dim;
        for &(head, edit) in edits {
            Error::check_index("head", head, self.heads)?;
            edit.apply(out.output.slice_mut(s![.., head * d..(head + 1) * d]))?;
        }
        out.output = self.w_o.forward(out.output.view())?; // (Tq, D)
        Ok(out)
    }

    /// Every step of head `head`, recomputed from the block's inputs.
    pub fn trace(
        &self,
        x_q: ArrayView2<f32>,
        x_kv: ArrayView2<f32>,
        mask: Option<&Mask>,
        scale_scores: bool,
        head: usize,
    ) -> Result<HeadTrace> {
        Error::check_index("head", head, self.heads)?;
        let (q, k) = self.project_unrotated(x_q, x_kv)?;
        let v = self.w_v.forward(x_kv)?; // (Tk, KV·d_k)
        let g = self.kv_head(head);
        let d = self.head_dim;
        let q = q.slice(s![.., head * d..(head + 1) * d]).to_owned(); // (Tq, d_k)
        let k = k.slice(s![.., g * d..(g + 1) * d]).to_owned(); // (Tk, d_k)
        let v = v.slice(s![.., g * d..(g + 1) * d]).to_owned(); // (Tk, d_k)
        let (q_rotated, k_rotated) = if self.positions.rotates() {
            let (mut qr, mut kr) = (q.clone(), k.clone());
            self.positions.rotate(&mut qr, &mut kr, d)?;
            (Some(qr), Some(kr))
        } else {
            (None, None)
        };
        let buckets = self.positions.buckets(0, q.nrows(), k.nrows());
        let bias = self.positions.head_bias(head, buckets.as_ref());
        let steps =
            ScoreSteps { divisor: self.score_scale.divisor(d, scale_scores), bias: bias.as_ref().map(|b| b.view()) };
        let steps = sdpa::trace_steps(
            q_rotated.as_ref().unwrap_or(&q).view(),
            k_rotated.as_ref().unwrap_or(&k).view(),
            v.view(),
            mask,
            steps,
        )?;
        Ok(HeadTrace { x_q: x_q.to_owned(), x_kv: x_kv.to_owned(), q, k, v, q_rotated, k_rotated, kv_head: g, steps })
    }

    /// Every query head's Q (H, Tq, d_k) and K (H, Tk, d_k) as its scores use them: rotated
    /// in a rotary block, each query head with its key/value head's K (grouped-query), before
    /// the division by [`ScoreScale::divisor`] and any position bias.
    pub fn queries_keys(&self, x_q: ArrayView2<f32>, x_kv: ArrayView2<f32>) -> Result<(Array3<f32>, Array3<f32>)> {
        let p = self.project(x_q, x_kv, false)?;
        let d = self.head_dim;
        let q = Array3::from_shape_fn((self.heads, p.q.nrows(), d), |(h, t, c)| p.q[[t, h * d + c]]);
        let k = Array3::from_shape_fn((self.heads, p.k.nrows(), d), |(h, t, c)| p.k[[t, self.kv_head(h) * d + c]]);
        Ok((q, k))
    }

    /// Head `h`'s query slice and its key/value head's slices.
    fn head_slices<'p>(
        &self,
        p: &'p Projected<'_>,
        h: usize,
    ) -> (ArrayView2<'p, f32>, ArrayView2<'p, f32>, Option<ArrayView2<'p, f32>>) {
        let (d, g) = (self.head_dim, self.kv_head(h));
        let (qc, kc) = (s![.., h * d..(h + 1) * d], s![.., g * d..(g + 1) * d]);
        (p.q.slice(qc), p.k.slice(kc), p.v.as_ref().map(|v| v.slice(kc)))
    }

    /// Q and K, rotated when the block rotates, and V when `values`.
    fn project(&self, x_q: ArrayView2<f32>, x_kv: ArrayView2<f32>, values: bool) -> Result<Projected<'static>> {
        let (mut q, mut k) = self.project_unrotated(x_q, x_kv)?;
        self.positions.rotate(&mut q, &mut k, self.head_dim)?;
        let v = if values { Some(self.w_v.forward(x_kv)?) } else { None }; // (Tk, KV·d_k)
        Ok(Projected { q, k: k.into(), v: v.map(Into::into), first: 0 })
    }

    /// Q and K before any rotation.
    fn project_unrotated(&self, x_q: ArrayView2<f32>, x_kv: ArrayView2<f32>) -> Result<(Array2<f32>, Array2<f32>)> {
        let d = self.d_model();
        for (name, x) in [("query input", x_q), ("key/value input", x_kv)] {
            if x.ncols() != d {
                return Err(Error::shape(name, &[x.nrows(), x.ncols()], &[x.nrows(), d]));
            }
        }
        let q = self.w_q.forward(x_q)?; // (Tq, H·d_k)
        let k = self.w_k.forward(x_kv)?; // (Tk, KV·d_k)
        Ok((q, k))
    }
}

/// (T, D) → (H, T, D/H): head `h` takes columns `h·d_k .. (h+1)·d_k`.
pub fn split_heads(x: ArrayView2<f32>, heads: usize) -> Result<Array3<f32>> {
    let (t, d) = x.dim();
    if heads == 0 || d % heads != 0 {
        return Err(Error::HeadsDoNotDivide { d_model: d, heads });
    }
    let d_k = d / heads;
    Ok(Array3::from_shape_fn((heads, t, d_k), |(h, i, j)| x[[i, h * d_k + j]]))
}

/// (H, T, d_k) → (T, H·d_k): the inverse of [`split_heads`].
pub fn concat_heads(x: ArrayView3<f32>) -> Array2<f32> {
    let (heads, t, d_k) = x.dim();
    Array2::from_shape_fn((t, heads * d_k), |(i, c)| x[[c / d_k, i, c % d_k]])
}

#[cfg(test)]
mod tests;
