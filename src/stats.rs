//! Numbers read off attention weights.

use ndarray::{Array2, ArrayView3, Axis};

/// Shannon entropy, in bits, of every query row of every head: (H, Tq, Tk) → (H, Tq).
///
/// A row that puts all its weight on one key has 0 bits; one spread evenly over n keys has
/// log₂ n. Without ÷√d_k the rows of a wide model collapse toward 0 bits: the saturation the
/// paper scales against. A fully masked row (all zeros) has 0 bits.
pub fn row_entropy_bits(weights: ArrayView3<f32>) -> Array2<f32> {
    let (heads, tq, _) = weights.dim();
    let mut out = Array2::zeros((heads, tq)); // (H, Tq)
    for (h, head) in weights.axis_iter(Axis(0)).enumerate() {
        for (i, row) in head.axis_iter(Axis(0)).enumerate() {
            out[[h, i]] = row.iter().filter(|&&p| p > 0.0).map(|&p| -p * p.log2()).sum();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn uniform_rows_have_log2_n_bits_and_one_hot_rows_none() {
        let w = array![[[0.25f32, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]];
        let h = row_entropy_bits(w.view());
        assert!((h[[0, 0]] - 2.0).abs() < 1e-6);
        assert_eq!(h[[0, 1]], 0.0);
        assert_eq!(h[[0, 2]], 0.0, "a fully masked row");
    }
}
