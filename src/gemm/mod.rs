//! The matrix products `y = x · w` — the linear maps, QKᵀ and weights · V — on kernels of our
//! own where they pay: in the real-model wasm builds a simd128 kernel ([`wasm`]), natively on
//! x86-64 an AVX-512 or AVX2 + FMA one chosen when the program starts ([`x86`]). Elsewhere, and
//! for the shapes a kernel does not take, ndarray's product (matrixmultiply's kernels).
//!
//! Every kernel sums each value of `y` along `k` in order, one step at a time, so a value of `y`
//! has the same bits whichever rows and columns it is computed with: the threads split both.

#[cfg(target_arch = "wasm32")]
mod wasm;
#[cfg(target_arch = "x86_64")]
pub mod x86;

use ndarray::{ArrayView2, ArrayViewMut2};

/// `y = x · w`, with `x` (m, k), `w` (k, n) and `y` (m, n).
pub fn product_into(x: ArrayView2<f32>, w: ArrayView2<f32>, y: &mut ArrayViewMut2<f32>) {
    #[cfg(target_arch = "wasm32")]
    return wasm::product_into(x, w, y);
    #[cfg(target_arch = "x86_64")]
    if x86::product_into(x, w, y) {
        return;
    }
    #[allow(unreachable_code)]
    ndarray::linalg::general_mat_mul(1.0, &x, &w, 0.0, y);
}
