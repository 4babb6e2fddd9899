//! Natively on x86-64: `y = x · w` with `w` read where it lies, never copied.
//!
//! matrixmultiply copies both factors into its kernel's order on every call. For a linear map
//! over a sentence of 25 tokens, copying the weights took about as long as multiplying them
//! (`docs/perf-notes.md`). Here a tile of R rows × 2 registers of columns of `y` stays in
//! registers while `k` runs over the whole row. Each step loads the tile's two registers of
//! row `k` of `w`, which lie side by side, broadcasts each row's value of `x`, and does one
//! fused multiply–add per register. The strip of `w` under a tile (k × 2 registers) is read
//! again by the next tile of rows, from the first-level cache: `k` goes in blocks of `KC` steps.
//! The first tile of each block also asks for the same rows two strips ahead. A model's weights
//! do not stay in cache from one sentence to the next, and without that request the kernel
//! waited on memory: a corpus of 1,000 MiniLM sentences took 6.5 s on one thread instead of 5.2.
//!
//! The instruction set is chosen the first time a product is asked for: AVX-512 where the CPU
//! has it, AVX2 + FMA otherwise, and ndarray's product on a CPU with neither.
//! `HEADMAP_GEMM=avx2` or `HEADMAP_GEMM=portable` picks a lesser one, to measure it.
//!
//! Each value of `y` is `fma(x[i,k-1], w[k-1,j], … fma(x[i,0], w[0,j], 0))`, in the order of
//! `k`, whatever the tile's height and register width. So a row has the same bits whichever
//! rows it is computed with, on any number of threads, and AVX-512 and AVX2 machines agree.

use std::arch::x86_64::*;
use std::sync::OnceLock;

use ndarray::{ArrayView2, ArrayViewMut2};

/// The kernel the products run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    Avx512,
    Avx2,
    /// ndarray's product (matrixmultiply)
    Portable,
}

impl Kernel {
    /// Whether this CPU has the kernel's instruction set (the portable product: never, as it
    /// is what the kernels hand back to).
    pub fn available(self) -> bool {
        match self {
            Kernel::Avx512 => is_x86_feature_detected!("avx512f"),
            Kernel::Avx2 => is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"),
            Kernel::Portable => false,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kernel::Avx512 => "avx512",
            Kernel::Avx2 => "avx2",
            Kernel::Portable => "portable",
        }
    }
}

/// The kernel chosen for this process: the CPU's best, or the one `HEADMAP_GEMM` names if the
/// CPU has it.
pub fn kernel() -> Kernel {
    static CHOSEN: OnceLock<Kernel> = OnceLock::new();
    *CHOSEN.get_or_init(|| {
        let best = [Kernel::Avx512, Kernel::Avx2].into_iter().find(|k| k.available()).unwrap_or(Kernel::Portable);
        match std::env::var("HEADMAP_GEMM").as_deref().map(str::trim) {
            Ok("portable") => Kernel::Portable,
            Ok("avx2") if Kernel::Avx2.available() => Kernel::Avx2,
            _ => best,
        }
    })
}

/// Rows of `x` from which a `w` laid out in columns is copied into rows for the kernels.
const MIN_ROWS_TO_COPY: usize = 8;

/// Where the factors lie: first values and row and column strides, in floats.
struct Parts {
    x: *const f32,
    x_row: usize,
    x_col: usize,
    w: *const f32,
    w_row: usize,
    y: *mut f32,
    y_row: usize,
    m: usize,
    k: usize,
    n: usize,
}

/// `y = x · w`, or false when the portable product must do it: the shapes disagree, `y` does
/// not have its columns side by side, `w` does not either and `x` has few rows, or the CPU
/// has no kernel.
pub fn product_into(x: ArrayView2<f32>, w: ArrayView2<f32>, y: &mut ArrayViewMut2<f32>) -> bool {
    product_with(kernel(), x, w, y)
}

/// [`product_into`] on `kernel`, which the CPU must have (the tests hold the kernels to each other).
pub fn product_with(kernel: Kernel, x: ArrayView2<f32>, w: ArrayView2<f32>, y: &mut ArrayViewMut2<f32>) -> bool {
    let (m, k, n) = (x.nrows(), x.ncols(), w.ncols());
    if !kernel.available() || w.nrows() != k || y.dim() != (m, n) {
        return false;
    }
    let columns_in_order = |strides: &[isize]| n <= 1 || strides[1] == 1;
    let forward = |strides: &[isize]| strides.iter().all(|&s| s >= 0);
    if !columns_in_order(w.strides()) {
        // a transposed view (Kᵀ in QKᵀ): copied into rows when there are rows enough to pay
        // for the copy, as matrixmultiply would copy it anyway
        if m < MIN_ROWS_TO_COPY {
            return false;
        }
        let rows = w.as_standard_layout();
        return product_with(kernel, x, rows.view(), y);
    }
    if !columns_in_order(y.strides()) {
        return false;
    }
    if !forward(x.strides()) || !forward(w.strides()) || !forward(y.strides()) {
        return false;
    }
    if m == 0 || n == 0 {
        return true;
    }
    if k == 0 {
        y.fill(0.0);
        return true;
    }
    let parts = Parts {
        x: x.as_ptr(),
        x_row: x.strides()[0] as usize,
        x_col: x.strides()[1] as usize,
        w: w.as_ptr(),
        w_row: w.strides()[0] as usize,
        y: y.as_mut_ptr(),
        y_row: y.strides()[0] as usize,
        m,
        k,
        n,
    };
    // SAFETY: `available` says the CPU has the kernel's instruction set; `parts` points
    // into the three views with their own strides, which hold m × k, k × n and m × n values,
    // and `y` is borrowed mutably for the call
    unsafe {
        match kernel {
            Kernel::Avx512 => avx512::product(&parts),
            Kernel::Avx2 => avx2::product(&parts),
            Kernel::Portable => unreachable!("handled above"),
        }
    }
    true
}

/// One kernel: `$lanes` floats a register, a tile of up to `$h0` rows × 2 registers.
macro_rules! kernel {
    ($isa:ident, $feature:literal, $lanes:literal, [$h0:literal, $h1:literal, $h2:literal],
     $zero:ident, $splat:ident, $load:ident, $madd:ident, $store:ident) => {
        mod $isa {
            use super::*;

            /// Columns of `y` a tile holds.
            const NR: usize = 2 * $lanes;
            /// Steps of `k` per block: the block of a strip that every tile of rows reads
            /// (KC × NR floats, 32 KiB for AVX-512) stays in the first-level cache.
            const KC: usize = 4096 / $lanes;

            /// The whole product, strip by strip of NR columns of `w`; a last, narrower strip is
            /// copied beside zeros so every value takes the same arithmetic.
            ///
            /// # Safety
            /// The CPU has `$feature`, and `p` describes three valid arrays, `y` writable.
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn product(p: &Parts) {
                let mut padded = Vec::new();
                let mut j0 = 0;
                while j0 < p.n {
                    let cols = NR.min(p.n - j0);
                    let (strip, strip_row) = if cols == NR {
                        (p.w.add(j0), p.w_row)
                    } else {
                        padded.clear();
                        padded.resize(p.k * NR, 0.0f32);
                        for (step, to) in padded.chunks_exact_mut(NR).enumerate() {
                            std::ptr::copy_nonoverlapping(p.w.add(step * p.w_row + j0), to.as_mut_ptr(), cols);
                        }
                        (padded.as_ptr(), NR)
                    };
                    for k0 in (0..p.k).step_by(KC) {
                        let steps = (k0, KC.min(p.k - k0));
                        let strip = (strip.add(k0 * strip_row), strip_row);
                        let mut i0 = 0;
                        while i0 < p.m {
                            let rows = [$h0, $h1, $h2, 1].into_iter().find(|&h| h <= p.m - i0).unwrap_or(1);
                            let a = p.x.add(i0 * p.x_row + k0 * p.x_col);
                            let out = p.y.add(i0 * p.y_row + j0);
                            match rows {
                                $h0 => tile::<$h0>(p, a, strip, steps, out, (cols, i0 == 0)),
                                $h1 => tile::<$h1>(p, a, strip, steps, out, (cols, i0 == 0)),
                                $h2 => tile::<$h2>(p, a, strip, steps, out, (cols, i0 == 0)),
                                _ => tile::<1>(p, a, strip, steps, out, (cols, i0 == 0)),
                            }
                            i0 += rows;
                        }
                    }
                    j0 += NR;
                }
            }

            /// `R` rows of `y` from `out` on (the first `cols` of NR columns), steps `k0` to
            /// `k0 + kc` of their sums: the rows of `x` from `a` on times the strip of `w` (kc
            /// rows of NR floats, `strip_row` apart). After the first block the sums go on from
            /// the values `y` holds, so each is still one chain of multiply–adds along `k`.
            ///
            /// # Safety
            /// As [`product`], and `a`, the strip and `out` lie inside their arrays for R rows.
            #[target_feature(enable = $feature)]
            #[inline]
            unsafe fn tile<const R: usize>(
                p: &Parts,
                a: *const f32,
                (strip, strip_row): (*const f32, usize),
                (k0, kc): (usize, usize),
                out: *mut f32,
                (cols, ahead): (usize, bool),
            ) {
                let mut c = [[$zero(); 2]; R];
                if k0 > 0 {
                    for (r, c) in c.iter_mut().enumerate() {
                        let mut v = [0.0f32; NR];
                        std::ptr::copy_nonoverlapping(out.add(r * p.y_row), v.as_mut_ptr(), cols);
                        *c = [$load(v.as_ptr()), $load(v.as_ptr().add($lanes))];
                    }
                }
                let (mut pa, mut pb) = (a, strip);
                for _ in 0..kc {
                    let b = [$load(pb), $load(pb.add($lanes))];
                    if ahead {
                        // SAFETY: a prefetch never faults, and the address is only computed
                        _mm_prefetch::<_MM_HINT_T1>(pb.wrapping_add(2 * NR).cast());
                        _mm_prefetch::<_MM_HINT_T1>(pb.wrapping_add(2 * NR + $lanes).cast());
                    }
                    for (r, c) in c.iter_mut().enumerate() {
                        let a = $splat(*pa.add(r * p.x_row));
                        c[0] = $madd(a, b[0], c[0]);
                        c[1] = $madd(a, b[1], c[1]);
                    }
                    pa = pa.wrapping_add(p.x_col); // past the end after the last step: never read
                    pb = pb.wrapping_add(strip_row);
                }
                for (r, c) in c.iter().enumerate() {
                    let to = out.add(r * p.y_row);
                    if cols == NR {
                        $store(to, c[0]);
                        $store(to.add($lanes), c[1]);
                    } else {
                        let mut v = [0.0f32; NR];
                        $store(v.as_mut_ptr(), c[0]);
                        $store(v.as_mut_ptr().add($lanes), c[1]);
                        std::ptr::copy_nonoverlapping(v.as_ptr(), to, cols);
                    }
                }
            }
        }
    };
}

kernel!(
    avx512,
    "avx512f",
    16,
    [8, 4, 2],
    _mm512_setzero_ps,
    _mm512_set1_ps,
    _mm512_loadu_ps,
    _mm512_fmadd_ps,
    _mm512_storeu_ps
);
kernel!(
    avx2,
    "avx2,fma",
    8,
    [6, 4, 2],
    _mm256_setzero_ps,
    _mm256_set1_ps,
    _mm256_loadu_ps,
    _mm256_fmadd_ps,
    _mm256_storeu_ps
);

#[cfg(test)]
mod tests {
    use ndarray::{s, Array2};

    use super::*;
    use crate::rng::SplitMix64;

    fn random(rows: usize, cols: usize, rng: &mut SplitMix64) -> Array2<f32> {
        Array2::from_shape_simple_fn((rows, cols), || rng.next_signed())
    }

    /// Each value summed along `k` in order with one rounding a step: what the kernels promise.
    fn in_order(x: &Array2<f32>, w: ArrayView2<f32>) -> Array2<f32> {
        Array2::from_shape_fn((x.nrows(), w.ncols()), |(i, j)| {
            (0..x.ncols()).fold(0.0f32, |sum, k| x[[i, k]].mul_add(w[[k, j]], sum))
        })
    }

    fn kernels() -> Vec<Kernel> {
        [Kernel::Avx512, Kernel::Avx2].into_iter().filter(|k| k.available()).collect()
    }

    #[test]
    fn every_kernel_sums_in_order_for_every_tile_and_strip() {
        let mut rng = SplitMix64::new(7);
        for kernel in kernels() {
            for m in [1, 2, 3, 5, 6, 7, 8, 9, 13, 25] {
                for k in [1, 3, 17, 64] {
                    for n in [1, 5, 16, 31, 32, 33, 48, 70] {
                        let (x, w) = (random(m, k, &mut rng), random(k, n, &mut rng));
                        let mut y = Array2::from_elem((m, n), f32::NAN);
                        assert!(product_with(kernel, x.view(), w.view(), &mut y.view_mut()));
                        assert_eq!(y, in_order(&x, w.view()), "{kernel:?} {m}×{k}·{k}×{n}");
                    }
                }
            }
        }
    }

    #[test]
    fn views_with_gaps_are_read_and_written_in_place() {
        let mut rng = SplitMix64::new(8);
        for kernel in kernels() {
            // x transposed (columns in order), w a slice of wider rows, y a slice of a wider array
            let xt = random(40, 11, &mut rng);
            let wide = random(40, 90, &mut rng);
            let w = wide.slice(s![.., 3..53]);
            let mut out = Array2::from_elem((11, 60), -1.0f32);
            assert!(product_with(kernel, xt.t(), w, &mut out.slice_mut(s![.., 5..55])));
            assert_eq!(out.slice(s![.., 5..55]), in_order(&xt.t().to_owned(), w));
            assert!(out.slice(s![.., ..5]).iter().chain(out.slice(s![.., 55..])).all(|&v| v == -1.0));
        }
    }

    #[test]
    fn a_row_has_its_bits_alone_and_on_either_kernel() {
        let mut rng = SplitMix64::new(9);
        let (x, w) = (random(25, 384, &mut rng), random(384, 100, &mut rng));
        let all: Vec<Array2<f32>> = kernels()
            .into_iter()
            .map(|kernel| {
                let mut y = Array2::zeros((25, 100));
                assert!(product_with(kernel, x.view(), w.view(), &mut y.view_mut()));
                for i in 0..25 {
                    let mut one = Array2::zeros((1, 100));
                    assert!(product_with(kernel, x.slice(s![i..i + 1, ..]), w.view(), &mut one.view_mut()));
                    assert_eq!(one.row(0), y.row(i), "{kernel:?}, row {i}");
                }
                y
            })
            .collect();
        assert!(all.windows(2).all(|p| p[0] == p[1]), "AVX-512 and AVX2 differ");
    }

    #[test]
    fn a_transposed_w_is_copied_into_rows_for_enough_rows_of_x() {
        let mut rng = SplitMix64::new(11);
        let (x, w) = (random(9, 32, &mut rng), random(20, 32, &mut rng));
        for kernel in kernels() {
            let mut y = Array2::zeros((9, 20));
            assert!(product_with(kernel, x.view(), w.t(), &mut y.view_mut()));
            assert_eq!(y, in_order(&x, w.t()));
        }
    }

    #[test]
    fn transposed_weights_and_mismatched_shapes_go_to_the_portable_product() {
        let mut rng = SplitMix64::new(10);
        let (x, w) = (random(4, 8, &mut rng), random(6, 8, &mut rng));
        let mut y = Array2::zeros((4, 6));
        for kernel in kernels() {
            assert!(!product_with(kernel, x.view(), w.t(), &mut y.view_mut()), "column-major w, 4 rows");
            assert!(!product_with(kernel, x.view(), w.view(), &mut y.view_mut()), "k 8 against 6");
        }
        assert!(!product_with(Kernel::Portable, x.view(), w.t(), &mut y.view_mut()));
        // the product the crate asks for is the same either way
        crate::gemm::product_into(x.view(), w.t(), &mut y.view_mut());
        assert!((&y - &x.dot(&w.t())).iter().all(|d| d.abs() < 1e-5));
    }
}
