//! One fixed multi-head attention workload, shared by the native benchmark
//! (`benches/multi_head.rs`) and the wasm one (`scripts/bench/wasm.mjs`), so both time the
//! same code on the same numbers.

use ndarray::Array2;

use crate::attention::multi_head::{MultiHeadAttention, MultiHeadOutput};
use crate::error::Result;
use crate::nn::Linear;
use crate::rng::SplitMix64;

/// Self-attention of n random tokens of width d_model through one block of h heads.
pub struct MultiHeadCase {
    block: MultiHeadAttention,
    x: Array2<f32>, // (n, D)
}

impl MultiHeadCase {
    pub fn new(n: usize, d_model: usize, heads: usize) -> Result<Self> {
        let mut rng = SplitMix64::new(42);
        let mut weight = |name: &str| {
            let w = Array2::from_shape_simple_fn((d_model, d_model), || rng.next_signed() / (d_model as f32).sqrt());
            Linear::new(name, w, None)
        };
        let block = MultiHeadAttention::new(weight("w_q")?, weight("w_k")?, weight("w_v")?, weight("w_o")?, heads)?;
        let x = Array2::from_shape_simple_fn((n, d_model), || rng.next_signed());
        Ok(MultiHeadCase { block, x })
    }

    pub fn run(&self) -> Result<MultiHeadOutput> {
        self.block.forward(self.x.view(), self.x.view(), None, true)
    }
}
