//! T5's relative position bias: instead of position embeddings, every head adds a learnt
//! number to each score, chosen by how far the key is from the query (`k − q`). Near
//! distances get a bucket each; farther ones share logarithmically wider buckets up to
//! `max_distance`. The encoder tells left from right (bidirectional); the decoder only looks
//! back. Mirrors `T5Attention._relative_position_bucket` in transformers'
//! `models/t5/modeling_t5.py`, f32 where it is.
//!
//! The table belongs to the first layer of each stack and every later layer reuses it, so one
//! [`RelativePositionBias`] is shared by all the blocks of a stack.

use ndarray::{Array2, ArrayView2};

use crate::error::{Error, Result};

#[derive(Debug, Clone, PartialEq)]
pub struct RelativePositionBias {
    table: Array2<f32>, // (buckets, H) relative_attention_bias.weight
    bidirectional: bool,
    max_distance: usize,
}

impl RelativePositionBias {
    /// `table` is (num_buckets, H); `bidirectional` for the encoder.
    pub fn new(table: Array2<f32>, bidirectional: bool, max_distance: usize) -> Result<Self> {
        let buckets = table.nrows();
        let exact = if bidirectional { buckets / 2 } else { buckets } / 2;
        if exact == 0 || max_distance <= exact {
            return Err(Error::out_of_range("relative_attention_max_distance", max_distance, exact + 1, usize::MAX));
        }
        Ok(RelativePositionBias { table, bidirectional, max_distance })
    }

    pub fn heads(&self) -> usize {
        self.table.ncols()
    }

    /// The bucket of a key `relative` = k − q positions from its query.
    pub fn bucket(&self, relative: i64) -> usize {
        let mut buckets = self.table.nrows();
        let mut bucket = 0;
        let distance = if self.bidirectional {
            buckets /= 2;
            if relative > 0 {
                bucket += buckets;
            }
            relative.unsigned_abs() as usize
        } else {
            (-relative).max(0) as usize
        };
        let exact = buckets / 2;
        if distance < exact {
            return bucket + distance;
        }
        // log-spaced beyond `exact`, in f32 as torch computes it, truncated toward zero
        let log_ratio = ((self.max_distance as f64) / (exact as f64)).ln() as f32;
        let large = ((distance as f32 / exact as f32).ln() / log_ratio * (buckets - exact) as f32) as usize;
        bucket + (exact + large).min(buckets - 1)
    }

    /// Each cell's bucket, (Tq, Tk), query i at position `first + i` and key j at j: computed
    /// once, shared by every head. `first` is 0 but for a decoder's step over its KV cache.
    pub fn buckets(&self, first: usize, tq: usize, tk: usize) -> Array2<usize> {
        Array2::from_shape_fn((tq, tk), |(q, k)| self.bucket(k as i64 - (first + q) as i64))
    }

    /// Head `head`'s bias over `buckets`, (Tq, Tk).
    pub fn head(&self, head: usize, buckets: ArrayView2<usize>) -> Array2<f32> {
        buckets.mapv(|b| self.table[[b, head]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_as_t5_numbers_them() {
        // t5-small's 32 buckets, max distance 128: the encoder's halves, the decoder looks back
        let enc = RelativePositionBias::new(Array2::zeros((32, 1)), true, 128).unwrap();
        let got: Vec<usize> = [-200, -20, -8, -7, -1, 0, 1, 7, 8, 20, 200].iter().map(|&r| enc.bucket(r)).collect();
        assert_eq!(got, [15, 10, 8, 7, 1, 0, 17, 23, 24, 26, 31], "from transformers");
        let dec = RelativePositionBias::new(Array2::zeros((32, 1)), false, 128).unwrap();
        let got: Vec<usize> = [5, 0, -1, -15, -16, -40, -500].iter().map(|&r| dec.bucket(r)).collect();
        assert_eq!(got, [0, 0, 1, 15, 16, 23, 31], "from transformers");
    }
}
