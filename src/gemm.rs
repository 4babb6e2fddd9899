//! The browser's matrix product for the linear maps, `y = x · w`: a register-blocked wasm
//! simd128 kernel of our own, used in place of matrixmultiply's in wasm builds (natively
//! matrixmultiply's AVX2 / AVX-512 kernels stay).
//!
//! A tile of 6 rows × 8 columns of `y` lives in twelve 4-lane registers while `k` runs: per step
//! two loads of `w`'s row (contiguous, as the weights are stored), six broadcasts of `x`'s
//! values and twelve multiply–adds — fused (`f32x4_relaxed_madd`) in a build with relaxed SIMD,
//! a multiply then an add otherwise. `k` goes in blocks of [`KC`] so a strip of `w` (KC × 8)
//! stays in the first-level cache while the tiles of every row use it. Nothing is packed: the
//! rows of `x` and of `w` are read where they are. The last rows go through tiles of 4, 2 or
//! 1 rows, the columns past the last whole tile through a plain loop.
//!
//! Each value is summed along `k` in order, one step at a time, so a row of `y` is the same
//! whichever rows it is computed with (the threaded build splits rows among threads).

use core::arch::wasm32::*;

use ndarray::{ArrayView2, ArrayViewMut2};

/// Rows of `y` a tile holds (then 4, 2 and 1 for the last rows), and its columns.
const MR: usize = 6;
const NR: usize = 8;
/// `k` per block: a strip of `w`, KC × NR floats, is 8 KiB.
const KC: usize = 256;

/// `y = x · w`, with `x` (m, k), `w` (k, n) and `y` (m, n). Falls back to ndarray's product when
/// a matrix is not laid out in rows (a transposed view).
pub fn product_into(x: ArrayView2<f32>, w: ArrayView2<f32>, y: &mut ArrayViewMut2<f32>) {
    let (m, k, n) = (x.nrows(), x.ncols(), w.ncols());
    if w.nrows() != k || y.dim() != (m, n) {
        // shapes that do not fit: ndarray's product says so (it asserts)
        return ndarray::linalg::general_mat_mul(1.0, &x, &w, 0.0, y);
    }
    let (Some(xs), Some(ws)) = (x.as_slice(), w.as_slice()) else {
        return ndarray::linalg::general_mat_mul(1.0, &x, &w, 0.0, y);
    };
    let Some(ys) = y.as_slice_mut() else {
        return ndarray::linalg::general_mat_mul(1.0, &x, &w, 0.0, y);
    };
    product_slices(xs, ws, ys, m, k, n);
}

/// The same on row-major slices.
fn product_slices(x: &[f32], w: &[f32], y: &mut [f32], m: usize, k: usize, n: usize) {
    y.fill(0.0);
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    let whole_cols = n - n % NR;
    let mats = Mats { x, w, k, n };
    for k0 in (0..k).step_by(KC) {
        let ks = (k0, (k0 + KC).min(k));
        for j0 in (0..whole_cols).step_by(NR) {
            let mut i0 = 0;
            while i0 < m {
                // every row goes through a tile, whatever its neighbours: a row's sums do not
                // depend on how the rows are split among threads
                i0 += match m - i0 {
                    r if r >= MR => tile::<MR>(&mats, y, (i0, j0), ks),
                    r if r >= 4 => tile::<4>(&mats, y, (i0, j0), ks),
                    r if r >= 2 => tile::<2>(&mats, y, (i0, j0), ks),
                    _ => tile::<1>(&mats, y, (i0, j0), ks),
                };
            }
        }
    }
    // the columns right of the last whole tile, in every row
    for i in 0..m {
        for j in whole_cols..n {
            y[i * n + j] = (0..k).fold(0.0f32, |s, kk| s + x[i * k + kk] * w[kk * n + j]);
        }
    }
}

/// The two factors, row-major: `x` (·, k) and `w` (k, n).
struct Mats<'a> {
    x: &'a [f32],
    w: &'a [f32],
    k: usize,
    n: usize,
}

/// Adds x[i0..i0+R, k0..k1] · w[k0..k1, j0..j0+8] to that tile of `y`; returns R.
#[inline(always)]
fn tile<const R: usize>(m: &Mats, y: &mut [f32], (i0, j0): (usize, usize), (k0, k1): (usize, usize)) -> usize {
    let (k, n) = (m.k, m.n);
    let mut c = [[f32x4_splat(0.0); 2]; R];
    for (r, row) in c.iter_mut().enumerate() {
        let at = (i0 + r) * n + j0;
        row[0] = load(&y[at..at + 4]);
        row[1] = load(&y[at + 4..at + 8]);
    }
    // every read below is inside these bounds, checked once here rather than at each step
    let rows: [&[f32]; R] = core::array::from_fn(|r| &m.x[(i0 + r) * k + k0..(i0 + r) * k + k1]);
    let strip = &m.w[k0 * n + j0..(k1 - 1) * n + j0 + NR]; // w[k0..k1, j0..j0+8], rows n apart
    let a: [*const f32; R] = core::array::from_fn(|r| rows[r].as_ptr());
    for step in 0..k1 - k0 {
        // SAFETY: step < k1 - k0, so `step * n + 8 <= strip.len()` and `step < rows[r].len()`:
        // the 32 bytes of w and the one float of each row read here lie inside the borrowed
        // slices; wasm loads need no alignment
        unsafe {
            let b = strip.as_ptr().add(step * n);
            let (b0, b1) = (v128_load(b.cast()), v128_load(b.add(4).cast()));
            for r in 0..R {
                let a = v128_load32_splat(a[r].add(step).cast());
                c[r][0] = madd(a, b0, c[r][0]);
                c[r][1] = madd(a, b1, c[r][1]);
            }
        }
    }
    for (r, row) in c.iter().enumerate() {
        let at = (i0 + r) * n + j0;
        store(&mut y[at..at + 4], row[0]);
        store(&mut y[at + 4..at + 8], row[1]);
    }
    R
}

/// `a · b + c`, fused where the build has relaxed SIMD.
#[inline(always)]
fn madd(a: v128, b: v128, c: v128) -> v128 {
    #[cfg(target_feature = "relaxed-simd")]
    return f32x4_relaxed_madd(a, b, c);
    #[cfg(not(target_feature = "relaxed-simd"))]
    return f32x4_add(c, f32x4_mul(a, b));
}

/// Four floats from `s` (at least four long) into a register.
#[inline(always)]
fn load(s: &[f32]) -> v128 {
    let s: &[f32; 4] = s[..4].try_into().expect("four floats");
    // SAFETY: reads the 16 bytes of `s`, which it borrows; wasm loads need no alignment
    unsafe { v128_load(s.as_ptr().cast()) }
}

/// A register's four floats into `s` (at least four long).
#[inline(always)]
fn store(s: &mut [f32], v: v128) {
    let s: &mut [f32; 4] = (&mut s[..4]).try_into().expect("four floats");
    // SAFETY: writes the 16 bytes of `s`, which it borrows mutably; no alignment needed
    unsafe { v128_store(s.as_mut_ptr().cast(), v) }
}
