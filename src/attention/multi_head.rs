//! Multi-head attention, §3.2.2 of the paper:
//! `MultiHead(X_Q, X_KV) = Concat(head_1, …, head_h) W_O`,
//! `head_i = Attention(X_Q W_Q[:, i], X_KV W_K[:, i], X_KV W_V[:, i])`.
//!
//! Each head takes its own slice of d_k = d_model / h columns of the projections, so h heads
//! cost about what one full-width head costs (h · n² · d/h = n² d).

use ndarray::{s, Array2, Array3, ArrayView2, ArrayView3, Axis};

use super::mask::Mask;
use super::sdpa::{self, Trace};
use crate::error::{Error, Result};
use crate::nn::Linear;

/// The four projections of one attention block.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiHeadAttention {
    pub w_q: Linear, // (D, D)
    pub w_k: Linear, // (D, D)
    pub w_v: Linear, // (D, D)
    pub w_o: Linear, // (D, D)
    pub heads: usize,
}

/// The block's output with the weights of every head.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiHeadOutput {
    pub output: Array2<f32>,  // (Tq, D), after W_O
    pub weights: Array3<f32>, // (H, Tq, Tk)
    pub fully_masked_rows: Vec<usize>,
}

/// One head's trace, from the block's inputs through its slices of Q, K and V to its output
/// before W_O.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadTrace {
    pub x_q: Array2<f32>,  // (Tq, D)
    pub x_kv: Array2<f32>, // (Tk, D)
    pub q: Array2<f32>,    // (Tq, d_k)
    pub k: Array2<f32>,    // (Tk, d_k)
    pub v: Array2<f32>,    // (Tk, d_k)
    pub steps: Trace,
}

impl MultiHeadAttention {
    pub fn new(w_q: Linear, w_k: Linear, w_v: Linear, w_o: Linear, heads: usize) -> Result<Self> {
        let d = w_q.d_in();
        if heads == 0 || d % heads != 0 {
            return Err(Error::HeadsDoNotDivide { d_model: d, heads });
        }
        for (name, lin) in [("W_Q", &w_q), ("W_K", &w_k), ("W_V", &w_v), ("W_O", &w_o)] {
            if lin.weight.dim() != (d, d) {
                return Err(Error::shape(name, &[lin.d_in(), lin.d_out()], &[d, d]));
            }
        }
        Ok(MultiHeadAttention { w_q, w_k, w_v, w_o, heads })
    }

    pub fn d_model(&self) -> usize {
        self.w_q.d_in()
    }

    pub fn d_k(&self) -> usize {
        self.d_model() / self.heads
    }

    /// Queries from `x_q` (Tq, D), keys and values from `x_kv` (Tk, D): the same rows for
    /// self-attention, the encoder output for cross-attention.
    pub fn forward(
        &self,
        x_q: ArrayView2<f32>,
        x_kv: ArrayView2<f32>,
        mask: Option<&Mask>,
        scale: bool,
    ) -> Result<MultiHeadOutput> {
        let (q, k, v) = self.project(x_q, x_kv)?; // (Tq, D), (Tk, D), (Tk, D)
        let (tq, tk, d_k) = (q.nrows(), k.nrows(), self.d_k());
        let mut weights = Array3::zeros((self.heads, tq, tk)); // (H, Tq, Tk)
        let mut heads_out = Array2::zeros((tq, self.d_model())); // (Tq, H·d_k)
        let mut fully_masked_rows = Vec::new();
        for h in 0..self.heads {
            let cols = s![.., h * d_k..(h + 1) * d_k];
            let a = sdpa::scaled_dot_product_attention(q.slice(cols), k.slice(cols), v.slice(cols), mask, scale)?;
            weights.index_axis_mut(Axis(0), h).assign(&a.weights);
            heads_out.slice_mut(cols).assign(&a.output);
            fully_masked_rows = a.fully_masked_rows;
        }
        let output = self.w_o.forward(heads_out.view())?; // (Tq, D)
        Ok(MultiHeadOutput { output, weights, fully_masked_rows })
    }

    /// Every step of head `head`, recomputed from the block's inputs.
    pub fn trace(
        &self,
        x_q: ArrayView2<f32>,
        x_kv: ArrayView2<f32>,
        mask: Option<&Mask>,
        scale: bool,
        head: usize,
    ) -> Result<HeadTrace> {
        Error::check_index("head", head, self.heads)?;
        let (q, k, v) = self.project(x_q, x_kv)?;
        let d_k = self.d_k();
        let cols = s![.., head * d_k..(head + 1) * d_k];
        let (q, k, v) = (q.slice(cols).to_owned(), k.slice(cols).to_owned(), v.slice(cols).to_owned());
        let steps = sdpa::trace(q.view(), k.view(), v.view(), mask, scale)?;
        Ok(HeadTrace { x_q: x_q.to_owned(), x_kv: x_kv.to_owned(), q, k, v, steps })
    }

    fn project(&self, x_q: ArrayView2<f32>, x_kv: ArrayView2<f32>) -> Result<(Array2<f32>, Array2<f32>, Array2<f32>)> {
        let d = self.d_model();
        for (name, x) in [("query input", x_q), ("key/value input", x_kv)] {
            if x.ncols() != d {
                return Err(Error::shape(name, &[x.nrows(), x.ncols()], &[x.nrows(), d]));
            }
        }
        let q = self.w_q.forward(x_q)?; // (Tq, D)
        let k = self.w_k.forward(x_kv)?; // (Tk, D)
        let v = self.w_v.forward(x_kv)?; // (Tk, D)
        Ok((q, k, v))
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
mod tests {
    use super::*;
    use ndarray::Array2;

    fn identity(d: usize) -> Linear {
        Linear::new("eye", Array2::eye(d), None).unwrap()
    }

    #[test]
    fn heads_must_divide_d_model() {
        let err = MultiHeadAttention::new(identity(6), identity(6), identity(6), identity(6), 4).unwrap_err();
        assert_eq!(err, Error::HeadsDoNotDivide { d_model: 6, heads: 4 });
        assert!(err.to_string().contains("4 heads do not divide d_model = 6"));
        assert!(split_heads(Array2::zeros((2, 6)).view(), 4).is_err());
    }

    #[test]
    fn projections_of_other_widths_are_rejected() {
        let wide = Linear::new("wide", Array2::zeros((4, 5)), None).unwrap();
        let err = MultiHeadAttention::new(identity(4), wide, identity(4), identity(4), 2).unwrap_err();
        assert_eq!(err.to_string(), "`W_K` has shape [4, 5], expected [4, 4]");
    }

    #[test]
    fn a_head_sees_only_its_own_columns() {
        // With identity projections, head 1's Q is columns 2..4 of the input.
        let mha = MultiHeadAttention::new(identity(4), identity(4), identity(4), identity(4), 2).unwrap();
        let x = ndarray::array![[1.0f32, 0.0, 0.0, 5.0], [0.0, 1.0, 5.0, 0.0]];
        let t = mha.trace(x.view(), x.view(), None, false, 1).unwrap();
        assert_eq!(t.q, ndarray::array![[0.0f32, 5.0], [5.0, 0.0]]);
        assert_eq!(t.steps.scores, ndarray::array![[25.0f32, 0.0], [0.0, 25.0]]);
        assert!(mha.trace(x.view(), x.view(), None, false, 2).is_err());
    }
}
