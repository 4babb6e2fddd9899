//! The benchmark workloads timed in wasm (`bench` feature, `scripts/bench/multi-head` and
//! `scripts/bench/gemm.mjs`): the same work as their native benches, behind small classes.

use ndarray::Array2;
use wasm_bindgen::prelude::*;

use super::js_error;

/// The benchmark workload of `benches/multi_head.rs`, for timing the same code in wasm
/// (`scripts/bench/multi-head`): one self-attention block of `heads` heads over `n` random tokens.
#[wasm_bindgen]
pub struct MultiHeadBench {
    case: crate::bench::MultiHeadCase,
}

#[wasm_bindgen]
impl MultiHeadBench {
    #[wasm_bindgen(constructor)]
    pub fn new(n: usize, d_model: usize, heads: usize) -> Result<MultiHeadBench, JsValue> {
        Ok(MultiHeadBench { case: crate::bench::MultiHeadCase::new(n, d_model, heads).map_err(js_error)? })
    }

    /// One forward pass; returns the first output value so the work cannot be skipped.
    pub fn run(&self) -> Result<f32, JsValue> {
        let out = self.case.run().map_err(js_error)?;
        Ok(out.output.first().copied().unwrap_or(0.0))
    }
}

/// One product `x · w` of MiniLM's shapes for `scripts/bench/gemm.mjs`: headmap's own kernel
/// ([`crate::gemm`]) against ndarray's (matrixmultiply's), on the same random matrices. With
/// `transposed`, `w` is kept as its transpose (n, k) and read as a view, as an output head's
/// (V, D) weight is.
#[wasm_bindgen]
pub struct GemmBench {
    x: Array2<f32>,
    w: Array2<f32>,
    transposed: bool,
    y: Array2<f32>,
}

#[wasm_bindgen]
impl GemmBench {
    #[wasm_bindgen(constructor)]
    pub fn new(m: usize, k: usize, n: usize, transposed: Option<bool>) -> GemmBench {
        let mut rng = crate::rng::SplitMix64::new(7);
        let mut random = |r, c| Array2::from_shape_fn((r, c), |_| rng.next_signed());
        let transposed = transposed.unwrap_or(false);
        let w = if transposed { random(n, k) } else { random(k, n) };
        GemmBench { x: random(m, k), w, transposed, y: Array2::zeros((m, n)) }
    }

    /// Our kernel once; returns a value so the work cannot be skipped.
    pub fn ours(&mut self) -> f32 {
        let w = if self.transposed { self.w.t() } else { self.w.view() };
        crate::gemm::product_into(self.x.view(), w, &mut self.y.view_mut());
        self.y[[0, 0]]
    }

    /// matrixmultiply's once.
    pub fn matrixmultiply(&mut self) -> f32 {
        let w = if self.transposed { self.w.t() } else { self.w.view() };
        ndarray::linalg::general_mat_mul(1.0, &self.x, &w, 0.0, &mut self.y);
        self.y[[0, 0]]
    }

    /// The largest |difference| between the two kernels' products.
    #[wasm_bindgen(js_name = maxDifference)]
    pub fn max_difference(&mut self) -> f32 {
        self.ours();
        let ours = self.y.clone();
        self.matrixmultiply();
        ours.iter().zip(&self.y).fold(0.0, |m, (a, b)| m.max((a - b).abs()))
    }
}
