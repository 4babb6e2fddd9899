//! What one attention block costs, as the seeds count it.
//!
//! Per head, QKᵀ is Tq·Tk·d_k multiply-adds and weights·V another Tq·Tk·d_v. Over h heads of
//! width d/h that is h · n² · d/h = n²d for each product: the same as one full-width head.
//! Multi-head attention reshapes the work; it does not reduce it.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cost {
    /// Multiply-adds of QKᵀ over all heads: h · Tq · Tk · d_k (= n² d when Tq = Tk = n).
    pub score_macs: u64,
    /// Floating-point operations of both products, QKᵀ and weights·V (2 per multiply-add).
    pub flops: u64,
    /// Bytes of the (H, Tq, Tk) weight matrices as f32.
    pub weight_bytes: u64,
}

impl Cost {
    pub fn of_attention(heads: usize, tq: usize, tk: usize, d_k: usize, d_v: usize) -> Self {
        let (h, tq, tk) = (heads as u64, tq as u64, tk as u64);
        let score_macs = h * tq * tk * d_k as u64;
        let value_macs = h * tq * tk * d_v as u64;
        Cost { score_macs, flops: 2 * (score_macs + value_macs), weight_bytes: 4 * h * tq * tk }
    }

    /// The sum over several blocks (layers).
    pub fn times(self, blocks: usize) -> Self {
        let n = blocks as u64;
        Cost { score_macs: self.score_macs * n, flops: self.flops * n, weight_bytes: self.weight_bytes * n }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_do_not_change_the_product_cost() {
        // The paper's base model: d_model 512, h 8, d_k 64, n = 10 tokens.
        let eight = Cost::of_attention(8, 10, 10, 64, 64);
        let one = Cost::of_attention(1, 10, 10, 512, 512);
        assert_eq!(eight.score_macs, 10 * 10 * 512, "n² d");
        assert_eq!(eight.flops, one.flops);
        assert_eq!(eight.weight_bytes, 8 * one.weight_bytes, "but every head keeps its own n² weights");
    }
}
