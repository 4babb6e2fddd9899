//! Natively on x86-64: `y = x · w` on kernels of our own.
//!
//! A tile of R rows × 2 registers of columns of `y` stays in registers while `k` runs over a
//! block of steps. Each step loads the tile's two registers of row `k` of `w`, which lie side
//! by side, broadcasts each row's value of `x`, and does one fused multiply–add per register.
//! With `MIN_ROWS_TO_PACK` rows or more, a tile takes every strip of a panel of `w` (KC steps
//! × NC columns) before the next tile does, so its rows of `x` stay in the first-level cache.
//!
//! For a few rows of `x` (a short sentence) `w` is read where it lies: matrixmultiply copies
//! both factors on every call, and for a linear map over 25 tokens copying the weights took
//! about as long as multiplying them (`docs/perf-notes.md`). Each strip then goes to every
//! tile of rows in turn, so that `w`, which does not stay in cache from one sentence to the
//! next, comes from memory once: MiniLM at 16 tokens on an AVX2-only CPU took 0.90 of the time
//! it took with each tile reading the whole panel. The first tile of each strip asks for the
//! same rows two strips ahead; without that request it waited on memory. From
//! `MIN_ROWS_TO_PACK` rows the panel is copied into strips, which the later tiles read side by
//! side: MiniLM at 512 tokens took 0.80 of the time it took reading strips in place. The first
//! tile of each panel makes the copy as it reads `w` in place, so the copy's loads wait under
//! that tile's multiply–adds rather than in a pass of their own.
//!
//! The instruction set is chosen the first time a product is asked for: AVX-512 where the CPU
//! has it, AVX2 + FMA otherwise, and ndarray's product on a CPU with neither.
//! `HEADMAP_GEMM=avx2` or `HEADMAP_GEMM=portable` picks a lesser one, to measure it.
//!
//! Each value of `y` is `fma(x[i,k-1], w[k-1,j], … fma(x[i,0], w[0,j], 0))`, in the order of
//! `k`, whatever the tile's height and register width. So a row has the same bits whichever
//! rows it is computed with, on any number of threads, and AVX-512 and AVX2 machines agree.

use std::arch::x86_64::*;

use ndarray::{ArrayView2, ArrayViewMut2};

/// Rows of `x` from which a `w` laid out in columns is copied into rows for the kernels.
const MIN_ROWS_TO_COPY: usize = 8;

/// Rows of `x` from which each panel of `w` is copied into strips for the tiles after the first
/// (`product`): below, the copy cost more than it saved (MiniLM at 16 tokens, 7 %; copied from
/// 13 rows by the first tiles, 14 % at 16 tokens and 6 % at 25).
const MIN_ROWS_TO_PACK: usize = 32;

/// Rows of `x` from which the tiles ask for the next panel of `w` ([`Ahead`]) while they read
/// this one in place, below [`MIN_ROWS_TO_PACK`]: MiniLM natively on one thread took 0.92 of
/// the time at 16 tokens, 0.96 at 12, 0.97 at 25, but 1.03 at 9 and 1.08 at 5, where the tiles
/// have too little work to hide the requests behind (per-round ratios, 150–200 rounds).
const MIN_ROWS_AHEAD: usize = 12;

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

/// One kernel: `$lanes` floats a register, a tile of up to `$h0` rows × 2 registers, then `$h1`,
/// `$h2`, `$h3` and 1 for the rows left.
macro_rules! kernel {
    ($isa:ident, $feature:literal, $lanes:literal, [$h0:literal, $h1:literal, $h2:literal, $h3:literal], $tall:path,
     $zero:ident, $splat:ident, $load:ident, $madd:ident, $store:ident) => {
        mod $isa {
            use super::*;

            /// Columns of `y` a tile holds.
            const NR: usize = 2 * $lanes;
            /// Steps of `k` per block: a tile's sums are stored and taken up again between
            /// blocks, and the panel of `w` it reads is KC × NC floats, 256 KB, half a Zen 3
            /// core's second-level cache. AVX2 had 512 steps, a panel the whole of that cache:
            /// 256 took 0.98 of the time at 16 and 128 tokens on such a CPU, 0.99 at 512.
            const KC: usize = 256;
            /// Columns of `w` per panel: 256 × 4 bytes, a run of 16 cache lines in each row.
            const NC: usize = 256;
            // a product with rows enough to copy `w` starts with a tile of the tallest height,
            // which copies the strips it reads
            const _: () = assert!(MIN_ROWS_TO_PACK >= $h0);

            /// The whole product in blocks of KC steps of `k` and panels of NC columns of `w`.
            /// Copied, each tile of rows takes every strip of NR columns of the panel in turn,
            /// so its rows of `x` stay in the first-level cache while the panel comes from the
            /// second. Read in place (fewer rows than MIN_ROWS_TO_PACK), each strip goes to
            /// every tile in turn instead, and `w` comes from memory once.
            ///
            /// With rows enough to pay for it, the panel is copied strip by strip into one
            /// buffer, where a strip's rows lie side by side. The first tile of rows reads each
            /// whole strip in place, asking for the rows two strips ahead as it goes, and
            /// stores what it loads into the buffer; the tiles after it read the buffer. As a
            /// pass of its own before the tiles, the copy waited on memory for the weights of a
            /// model, which do not stay in cache from one sentence to the next: at 128 tokens it
            /// held a seventh of the products' samples, and MiniLM took 0.94 of the time on one
            /// thread with the copy made by the first tiles. A last, narrower strip is always
            /// copied first, beside zeros, so every value takes the same arithmetic.
            ///
            /// # Safety
            /// The CPU has `$feature`, and `p` describes three valid arrays, `y` writable.
            #[target_feature(enable = $feature)]
            pub(super) unsafe fn product(p: &Parts) {
                let copy = p.m >= MIN_ROWS_TO_PACK;
                let mut panel: Vec<f32> = Vec::new();
                // each tile's first row and height, tallest first
                let mut tiles = Vec::with_capacity(p.m.div_ceil($h0) + 4);
                let mut i0 = 0;
                while i0 < p.m {
                    let rows = [$h0, $h1, $h2, $h3, 1].into_iter().find(|&h| h <= p.m - i0).unwrap_or(1);
                    tiles.push((i0, rows));
                    i0 += rows;
                }
                for k0 in (0..p.k).step_by(KC) {
                    let steps = (k0, KC.min(p.k - k0));
                    for n0 in (0..p.n).step_by(NC) {
                        let width = NC.min(p.n - n0);
                        let strips = width.div_ceil(NR);
                        let copied = copy || width % NR != 0;
                        // from MIN_ROWS_TO_PACK rows the first tiles copy each whole strip as
                        // they read it, and a narrower last strip is copied here, beside zeros;
                        // below, a panel with a narrower last strip is copied here whole
                        let whole = if copy { width / NR } else { 0 };
                        if copied {
                            // written by `pack` or the first tiles before any tile reads it,
                            // within the capacity
                            panel.reserve(strips * KC * NR);
                            #[cfg(test)]
                            // a strip read before it is written gives NaN, not last product's values
                            panel.spare_capacity_mut().fill(std::mem::MaybeUninit::new(f32::NAN));
                            if whole < strips {
                                pack(
                                    p.w.add(k0 * p.w_row + n0 + whole * NR),
                                    p.w_row,
                                    steps.1,
                                    width - whole * NR,
                                    panel.as_mut_ptr().add(whole * KC * NR),
                                );
                            }
                        }
                        let panel = panel.as_mut_ptr();
                        // the panel the next copy reads: the next along `n`, else the first
                        // of the next block of `k`
                        let next = if n0 + NC < p.n {
                            Some((k0, n0 + NC))
                        } else {
                            Some((k0 + KC, 0)).filter(|&(k1, _)| k1 < p.k)
                        };
                        let slots = tiles.len() * strips;
                        let mut ahead = next
                            .filter(|_| p.m >= MIN_ROWS_AHEAD)
                            .map(|(k1, n1)| Ahead::new(p, (k1, KC.min(p.k - k1)), (n1, NC.min(p.n - n1)), slots));
                        for slot in 0..slots {
                            // copied, a tile takes every strip before the next tile; read in
                            // place, each strip goes to every tile in turn while it is in cache
                            let (t, s) = match copy {
                                true => (slot / strips, slot % strips),
                                false => (slot % tiles.len(), slot / tiles.len()),
                            };
                            let (i0, rows) = tiles[t];
                            let a = p.x.add(i0 * p.x_row + k0 * p.x_col);
                            let j0 = n0 + s * NR;
                            let first = i0 == 0 && s < whole;
                            let strip = if copied && !first {
                                (panel.add(s * KC * NR) as *const f32, NR)
                            } else {
                                (p.w.add(k0 * p.w_row + j0), p.w_row)
                            };
                            let keep = if first { panel.add(s * KC * NR) } else { std::ptr::null_mut() };
                            if let Some(ahead) = &mut ahead {
                                ahead.next();
                            }
                            let out = p.y.add(i0 * p.y_row + j0);
                            let how = (NR.min(p.n - j0), (!copied && i0 == 0) || first, keep);
                            match rows {
                                $h0 if first => tile::<$h0, true>(p, a, strip, steps, out, how),
                                $h0 => tile::<$h0, false>(p, a, strip, steps, out, how),
                                $h1 => tile::<$h1, false>(p, a, strip, steps, out, how),
                                $h2 => tile::<$h2, false>(p, a, strip, steps, out, how),
                                $h3 => tile::<$h3, false>(p, a, strip, steps, out, how),
                                _ => tile::<1, false>(p, a, strip, steps, out, how),
                            }
                        }
                    }
                }
            }

            /// `kc` rows of `width` floats from `from` on (`row` apart), a whole row at a time,
            /// into strips of NR columns KC × NR floats apart from `to` on, NR floats a row,
            /// zeros after the last strip's columns.
            ///
            /// # Safety
            /// As [`product`]; `from` holds kc rows of `width` floats, and `to` room for
            /// ⌈width / NR⌉ strips.
            #[target_feature(enable = $feature)]
            #[inline]
            unsafe fn pack(from: *const f32, row: usize, kc: usize, width: usize, to: *mut f32) {
                for step in 0..kc {
                    let src = from.add(step * row);
                    for j in (0..width).step_by(NR) {
                        let dst = to.add((j / NR) * KC * NR + step * NR);
                        let mut pad = [0.0; NR];
                        let row = whole_row(src.add(j), NR.min(width - j), &mut pad);
                        $store(dst, $load(row));
                        $store(dst.add($lanes), $load(row.add($lanes)));
                    }
                }
            }

            /// A row of NR floats the registers can load whole: `from` itself when it has all
            /// NR columns, else its `cols` values copied into `pad`, beside zeros.
            ///
            /// # Safety
            /// `from` holds `cols` floats, at most NR, and `pad` outlives the loads from the
            /// pointer given back.
            #[inline(always)]
            unsafe fn whole_row(from: *const f32, cols: usize, pad: &mut [f32; NR]) -> *const f32 {
                if cols == NR {
                    return from;
                }
                std::ptr::copy_nonoverlapping(from, pad.as_mut_ptr(), cols);
                pad.as_ptr()
            }

            /// `R` rows of `y` from `out` on (the first `cols` of NR columns), steps `k0` to
            /// `k0 + kc` of their sums: the rows of `x` from `a` on times the strip of `w` (kc
            /// rows of NR floats, `strip_row` apart). After the first block the sums go on from
            /// the values `y` holds, so each is still one chain of multiply–adds along `k`.
            /// With KEEP the tile also stores each step's row of the strip at `keep`, NR floats
            /// a row: the panel's copy of the strip, which the tiles after it read.
            ///
            /// # Safety
            /// As [`product`], and `a`, the strip and `out` lie inside their arrays for R rows;
            /// with KEEP, `keep` has room for kc × NR floats that nothing else reads meanwhile.
            #[target_feature(enable = $feature)]
            #[inline]
            unsafe fn tile<const R: usize, const KEEP: bool>(
                p: &Parts,
                a: *const f32,
                (strip, strip_row): (*const f32, usize),
                (k0, kc): (usize, usize),
                out: *mut f32,
                (cols, ahead, keep): (usize, bool, *mut f32),
            ) {
                let mut c = [[$zero(); 2]; R];
                if k0 > 0 {
                    for (r, c) in c.iter_mut().enumerate() {
                        let mut pad = [0.0; NR];
                        let row = whole_row(out.add(r * p.y_row), cols, &mut pad);
                        *c = [$load(row), $load(row.add($lanes))];
                    }
                }
                if R == $h0 && strip_row == NR && p.x_col == 1 && !KEEP {
                    // the tallest tile on a strip NR floats a row (copied, or a `w` that
                    // narrow), rows of `x` in order, not itself copying: in written-out
                    // instructions (`tall`);
                    // SAFETY: R is $h0, so `c` is that tile's sums
                    $tall(&mut *c.as_mut_ptr().cast(), a, p.x_row, strip, kc);
                } else {
                    let (mut pa, mut pb, mut pk) = (a, strip, keep);
                    for _ in 0..kc {
                        let b = [$load(pb), $load(pb.add($lanes))];
                        if KEEP {
                            $store(pk, b[0]);
                            $store(pk.add($lanes), b[1]);
                            pk = pk.add(NR);
                        }
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
    [12, 8, 4, 2],
    tall::steps12,
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
    [6, 4, 3, 2],
    tall::steps6,
    _mm256_setzero_ps,
    _mm256_set1_ps,
    _mm256_loadu_ps,
    _mm256_fmadd_ps,
    _mm256_storeu_ps
);

mod ahead;
mod choice;
mod tall;
use ahead::Ahead;
pub use choice::{kernel, Kernel};
#[cfg(test)]
mod tests;
