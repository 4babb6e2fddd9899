//! What a head writes, not only where it looks. Head h's output at query i, through its d_k
//! rows of W_O (W_O^h), is Σ_j α_ij v_j W_O^h, so:
//!
//! ```text
//! value-weighted  ‖α_ij · v_j W_O^h‖ = α_ij ‖v_j W_O^h‖     what key j adds to query i through head h
//!                                                          (Kobayashi et al. 2020, "Attention is not only a weight")
//! head write      c_hi = z_hi W_O^h                         what head h adds to query i's residual stream
//! share           max(0, ‖y_i‖₁ − ‖y_i − c_hi‖₁) / Σ_h' …   y_i = Σ_h c_hi: how much of the block's write is
//!                                                          head h's (the proximity of Ferrando and Voita 2024,
//!                                                          the LLM Transparency Tool's contributions)
//! ```
//!
//! W_O's bias belongs to no head and is left out of y. No gradients: one pass over the block.

use ndarray::{s, Array2, ArrayView2};

use super::{HeadEdit, MultiHeadAttention};
use crate::attention::mask::Mask;
use crate::error::{ensure_finite, Error, Result};

/// What every head of a block writes at each query.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadWrites {
    /// ‖c_hi‖₂, (H, Tq).
    pub norms: Array2<f32>,
    /// Each head's share of the block's write, (H, Tq): a query's shares sum to 1 (to 0 where
    /// no head writes anything, as at a query that sees no key).
    pub shares: Array2<f32>,
}

impl MultiHeadAttention {
    /// ‖v_j W_O^h‖₂ for every head h and key j, (H, Tk): head h's value-weighted weights are
    /// its weights α_ij times column j of this.
    pub fn value_norms(&self, x_kv: ArrayView2<f32>) -> Result<Array2<f32>> {
        if x_kv.ncols() != self.d_model() {
            return Err(Error::shape(
                "key/value input",
                &[x_kv.nrows(), x_kv.ncols()],
                &[x_kv.nrows(), self.d_model()],
            ));
        }
        let v = self.w_v.forward(x_kv)?; // (Tk, KV·d_k)
        ensure_finite("V", v.view())?;
        let d = self.head_dim;
        let mut norms = Array2::zeros((self.heads, x_kv.nrows()));
        for h in 0..self.heads {
            let g = self.kv_head(h);
            let written = self.through_w_o(v.slice(s![.., g * d..(g + 1) * d]), h); // (Tk, D)
            for (n, row) in norms.row_mut(h).iter_mut().zip(written.rows()) {
                *n = row.dot(&row).sqrt();
            }
        }
        Ok(norms)
    }

    /// What every head writes at each query, with `edits` applied as the run applied them (a
    /// head turned off writes nothing).
    pub fn head_writes(
        &self,
        x_q: ArrayView2<f32>,
        x_kv: ArrayView2<f32>,
        mask: Option<&Mask>,
        scale_scores: bool,
        edits: &[(usize, &HeadEdit)],
    ) -> Result<HeadWrites> {
        let mut z = self.head_outputs(x_q, x_kv, mask, scale_scores)?; // (Tq, H·d_k)
        let d = self.head_dim;
        for &(head, edit) in edits {
            Error::check_index("head", head, self.heads)?;
            edit.apply(z.slice_mut(s![.., head * d..(head + 1) * d]))?;
        }
        let y = crate::par::product_then(z.view(), self.w_o.weight.view(), |_, _| {}); // (Tq, D), no bias
        let tq = z.nrows();
        let mut norms = Array2::zeros((self.heads, tq));
        let mut shares = Array2::zeros((self.heads, tq));
        // a head at a time: (Tq, D) at once, never (H, Tq, D)
        for h in 0..self.heads {
            let c = self.through_w_o(z.slice(s![.., h * d..(h + 1) * d]), h); // (Tq, D)
            for (i, (c_i, y_i)) in c.rows().into_iter().zip(y.rows()).enumerate() {
                norms[[h, i]] = c_i.dot(&c_i).sqrt();
                let (mut whole, mut without) = (0.0f32, 0.0f32);
                for (&c, &y) in c_i.iter().zip(y_i) {
                    whole += y.abs();
                    without += (y - c).abs();
                }
                shares[[h, i]] = (whole - without).max(0.0);
            }
        }
        for mut column in shares.columns_mut() {
            let sum: f32 = column.sum();
            column.mapv_inplace(|p| if sum > 0.0 { p / sum } else { 0.0 });
        }
        Ok(HeadWrites { norms, shares })
    }

    /// `x` (T, d_k) through head `h`'s rows of W_O: (T, D).
    fn through_w_o(&self, x: ArrayView2<f32>, h: usize) -> Array2<f32> {
        let d = self.head_dim;
        crate::par::product_then(x, self.w_o.weight.slice(s![h * d..(h + 1) * d, ..]), |_, _| {})
    }
}
