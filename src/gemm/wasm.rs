//! The browser's matrix products, `y = x · w` — the linear maps, QKᵀ and weights · V: a
//! register-blocked wasm simd128 kernel of our own, used in place of matrixmultiply's in the
//! real-model wasm builds (natively matrixmultiply's AVX2 / AVX-512 kernels stay).
//!
//! A tile of 4 rows × 8 columns of `y` lives in eight 4-lane registers while `k` runs: per step
//! two loads of `w`, four broadcasts of `x`'s values and eight multiply–adds — fused
//! (`f32x4_relaxed_madd`) in a build with relaxed SIMD, a multiply then an add otherwise.
//! Four rows, not six: the compiler keeps every broadcast of a step alive at once, and six
//! rows' worth (12 sums + 2 + 6 = 20 registers) is more than V8 has on x86-64 (15), so
//! the sums spilled to memory, and 4 × 8 measured faster (`docs/perf-notes.md`).
//!
//! `k` goes in blocks of [`KC`]. Both factors are copied into the order the tile reads them
//! (`x`'s tiles step-major, `w`'s strip of 8 columns row after row) so every load is the next
//! one in memory: read in place, the rows of a strip of `w` lie `n` floats apart and, for the
//! linear maps' n (multiples of 384), fall on a few sets of the first-level cache and push each
//! other out. `w` is copied a panel of strips at a time, reading whole rows of the panel, so
//! each cache line of `w` is fetched once ([`PANEL_FLOATS`], [`PANEL_STRIPS`]). The last rows go
//! through tiles of 2 or 1 rows; the last columns through a strip padded with zeros, of which
//! only the real columns are stored, so every value of `y` takes the same arithmetic.
//!
//! Each value is summed along `k` in order, one step at a time, so a value of `y` is the same
//! whichever rows and columns it is computed with (the threaded build splits both).

use core::arch::wasm32::*;

use ndarray::{s, ArrayView2, ArrayViewMut2};

/// Rows of `y` a tile holds, and its columns; the heights of the last rows' tiles.
const MR: usize = 4;
const HEIGHTS: [usize; 3] = [MR, 2, 1];
const NR: usize = 8;
/// Floats of `w` copied at a time for fewer than [`FEW_ROWS`] rows: a panel of as many strips as
/// fit, read a whole row of the panel at a time (for kc = 256, 32 strips: 1 KiB of each row, in
/// order). Few rows use each value of `w` a few times only, and the model's weights come from
/// memory or the last-level cache at every sentence: MiniLM at 16 tokens took 0.90 of the time
/// of 4-strip panels, in the forward (Chromium 156, one thread, per round).
const PANEL_FLOATS: usize = 1 << 16;
const FEW_ROWS: usize = 64;
/// Strips a panel from [`FEW_ROWS`] rows on: two cache lines of each row. Wider panels took 1.06
/// of its time at 512 rows in `scripts/bench/gemm` (the copy pushes `x` out of the second-level
/// cache, most likely), and the same in the forward within its noise.
const PANEL_STRIPS: usize = 4;
/// Floats between strips of a panel beyond a strip: strips 8 KiB apart would all start on one
/// set of the first-level cache, and the copy writes to all at once.
const PAD: usize = 16;
/// `k` per block: a packed strip of `w`, KC × NR floats, is 8 KiB.
const KC: usize = 256;
/// Products at least this wide (an output head over the vocabulary) take `k` in blocks of up to
/// [`KC_WIDE`]: each block reads and writes all of `y` again, rows n floats apart.
const WIDE: usize = 8192;
const KC_WIDE: usize = 1024;

/// `y = x · w`, with `x` (m, k), `w` (k, n) and `y` (m, n). `x` and `w` may have any layout
/// (a transposed view, GPT-NeoX's column-major weights): both are copied into the tiles' order
/// anyway. A `y` not laid out in rows (a head's columns of the output) is written through a
/// copy; shapes that do not fit go to ndarray's product, which says so.
pub fn product_into(x: ArrayView2<f32>, w: ArrayView2<f32>, y: &mut ArrayViewMut2<f32>) {
    let (m, k, n) = (x.nrows(), x.ncols(), w.ncols());
    if w.nrows() != k || y.dim() != (m, n) {
        return ndarray::linalg::general_mat_mul(1.0, &x, &w, 0.0, y);
    }
    match y.as_slice_mut() {
        Some(ys) => product_rows(x, w, ys),
        None if n > 0 => {
            let mut rows = vec![0.0; m * n];
            product_rows(x, w, &mut rows);
            for (mut to, from) in y.rows_mut().into_iter().zip(rows.chunks_exact(n)) {
                to.iter_mut().zip(from).for_each(|(t, &f)| *t = f);
            }
        }
        None => {} // no columns: nothing to write
    }
}

/// A tile of rows of `x`, packed: its first row, its height and where it starts in the copy.
struct Tile {
    i0: usize,
    rows: usize,
    at: usize,
}

/// The product into `y`, row-major (m, n).
fn product_rows(x: ArrayView2<f32>, w: ArrayView2<f32>, y: &mut [f32]) {
    let (m, k, n) = (x.nrows(), x.ncols(), w.ncols());
    y.fill(0.0);
    if m == 0 || n == 0 || k == 0 {
        return;
    }
    if m == 1 {
        // one row (a decoder's step, the lens of one position): `w` read once in place
        let row: Vec<f32> = x.row(0).iter().copied().collect();
        if one_row(&row, w, y) {
            return;
        }
    }
    let block = if n >= WIDE { k.min(KC_WIDE) } else { KC.min(k) };
    PANEL.with_borrow_mut(|wp| blocks(x, w, y, block, wp));
}

thread_local! {
    /// The copy of `w`'s panels of this thread's products, kept from one to the next: a panel
    /// is up to 256 KiB (at most three times that for a last block of a few steps of `k`),
    /// which a fresh buffer would zero at every product.
    static PANEL: core::cell::RefCell<Vec<f32>> = const { core::cell::RefCell::new(Vec::new()) };
}

/// The product into `y` (zeroed) by blocks of `k`, with `wp` as the room for `w`'s panels.
fn blocks(x: ArrayView2<f32>, w: ArrayView2<f32>, y: &mut [f32], block: usize, wp: &mut Vec<f32>) {
    let (m, k, n) = (x.nrows(), x.ncols(), w.ncols());
    // x's copy grows with the rows, and zeroing it is little beside the rows' products
    let mut xp = vec![0.0f32; m * block];
    for k0 in (0..k).step_by(block) {
        let kc = block.min(k - k0);
        let tiles = pack_rows(x, (k0, kc), &mut xp);
        // a last, shorter block of k takes more strips a panel of few rows
        let strips = if m < FEW_ROWS { (PANEL_FLOATS / (kc * NR)).max(1) } else { PANEL_STRIPS };
        let (strips, stride) = (strips.min(n.div_ceil(NR)), kc * NR + PAD);
        wp.resize(wp.len().max(strips * stride), 0.0);
        let width = strips * NR;
        for p0 in (0..n).step_by(width) {
            let cols = width.min(n - p0);
            let panel = &mut wp[..stride * cols.div_ceil(NR)];
            pack_panel(w.slice(s![k0..k0 + kc, p0..p0 + cols]), panel, stride);
            for (q, strip) in panel.chunks_exact(stride).enumerate() {
                let (j0, strip) = (p0 + q * NR, &strip[..kc * NR]);
                let cols = NR.min(n - j0);
                for t in &tiles {
                    let a = &xp[t.at..t.at + t.rows * kc];
                    let at = (t.i0 * n + j0, n, cols);
                    match t.rows {
                        MR => tile::<MR>(a, strip, y, at),
                        2 => tile::<2>(a, strip, y, at),
                        _ => tile::<1>(a, strip, y, at), // 1, the last of HEIGHTS
                    }
                }
            }
        }
    }
}

/// Copies x[.., k0..k0+kc] into `packed` tile by tile, each tile step-major (`[step][row]`).
/// Every row goes through a tile whatever its neighbours, so a row's sums do not depend on
/// how the rows are split among threads.
fn pack_rows(x: ArrayView2<f32>, (k0, kc): (usize, usize), packed: &mut [f32]) -> Vec<Tile> {
    let m = x.nrows();
    let mut tiles = Vec::with_capacity(m / MR + 2);
    let (mut i0, mut at) = (0, 0);
    while i0 < m {
        let rows = HEIGHTS.into_iter().find(|&h| h <= m - i0).unwrap_or(1);
        for r in 0..rows {
            let from = x.slice(s![i0 + r, k0..k0 + kc]);
            for (step, &v) in from.iter().enumerate() {
                packed[at + step * rows + r] = v;
            }
        }
        tiles.push(Tile { i0, rows, at });
        i0 += rows;
        at += rows * kc;
    }
    tiles
}

/// Copies a panel of `w` (kc, its strips of 8 columns) into its strips, `stride` floats apart,
/// each as [`pack_strip`] lays it out. A row-major panel is read a whole row of the panel at a
/// time, in order, where strip by strip each row's cache lines were fetched once a strip.
fn pack_panel(w: ArrayView2<f32>, to: &mut [f32], stride: usize) {
    let (kc, width) = w.dim();
    if w.strides()[1] != 1 {
        for (q, to) in to.chunks_exact_mut(stride).enumerate() {
            pack_strip(w.slice(s![.., q * NR..(q * NR + NR).min(width)]), &mut to[..kc * NR]);
        }
        return;
    }
    let whole = width / NR;
    if whole * NR < width {
        // the columns a last strip lacks are zeros
        to[whole * stride..][..kc * NR].fill(0.0);
    }
    for (step, row) in w.rows().into_iter().enumerate() {
        match row.to_slice() {
            Some(row) => {
                let (strips, rest) = row.split_at(whole * NR);
                for (q, from) in strips.chunks_exact(NR).enumerate() {
                    // fixed-size moves: two vector loads and stores, never a call
                    let (from, to): (&[f32; NR], &mut [f32; NR]) =
                        (from.try_into().unwrap(), (&mut to[q * stride + step * NR..][..NR]).try_into().unwrap());
                    *to = *from;
                }
                if !rest.is_empty() {
                    to[whole * stride + step * NR..][..rest.len()].copy_from_slice(rest);
                }
            }
            None => row.iter().enumerate().for_each(|(j, &v)| to[(j / NR) * stride + step * NR + j % NR] = v),
        }
    }
}

/// Copies a strip of `w` (kc, 8 or fewer columns) whose columns are not side by side in memory
/// (a transposed view, a strided one) into `to` row after row, reading it in its own order; the
/// columns a last strip lacks are zeros. Row-major panels go through [`pack_panel`]'s rows.
fn pack_strip(w: ArrayView2<f32>, to: &mut [f32]) {
    let cols = w.ncols();
    if cols < NR {
        to.fill(0.0);
    }
    if w.strides()[0] == 1 {
        // column-major (a transposed view): a column at a time reads memory in order
        for (j, col) in w.columns().into_iter().enumerate() {
            for (step, &v) in col.iter().enumerate() {
                to[step * NR + j] = v;
            }
        }
    } else {
        for (row, to) in w.rows().into_iter().zip(to.chunks_exact_mut(NR)) {
            to.iter_mut().zip(row).for_each(|(t, &v)| *t = v);
        }
    }
}

/// Adds `a · b` to the first `cols` columns of the R × 8 tile of `y` whose first value is at
/// `y[at]`, rows `n` apart: `a` is the tile's rows of x packed step-major (kc × R), `b` the
/// strip of w (kc × 8).
#[inline(always)]
fn tile<const R: usize>(a: &[f32], b: &[f32], y: &mut [f32], (at, n, cols): (usize, usize, usize)) {
    let kc = b.len() / NR;
    let mut c = [[f32x4_splat(0.0); 2]; R];
    for (r, c) in c.iter_mut().enumerate() {
        let mut sums = [0.0f32; NR];
        match cols {
            NR => sums = y[at + r * n..][..NR].try_into().unwrap(),
            _ => sums[..cols].copy_from_slice(&y[at + r * n..at + r * n + cols]),
        }
        *c = load(&sums);
    }
    // every read below is inside this slice, checked once here rather than at each step
    let a = &a[..R * kc];
    let (mut pa, mut pb) = (a.as_ptr(), b.as_ptr());
    for _ in 0..kc {
        // SAFETY: at step s < kc, pa = a + s·R and pb = b + s·8; a is R·kc floats long and b
        // kc·8, so the R floats and the 8 read here lie inside the borrowed slices; wasm loads
        // need no alignment
        unsafe {
            let (b0, b1) = (v128_load(pb.cast()), v128_load(pb.add(4).cast()));
            for (r, c) in c.iter_mut().enumerate() {
                let a = v128_load32_splat(pa.add(r).cast());
                c[0] = madd(a, b0, c[0]);
                c[1] = madd(a, b1, c[1]);
            }
            pa = pa.add(R);
            pb = pb.add(NR);
        }
    }
    for (r, c) in c.iter().enumerate() {
        match cols {
            NR => *<&mut [f32; NR]>::try_from(&mut y[at + r * n..][..NR]).unwrap() = store(*c),
            _ => y[at + r * n..at + r * n + cols].copy_from_slice(&store(*c)[..cols]),
        }
    }
}

/// `y = x · w` for one row `x` (k) without copying `w` into strips, when `w` has its rows or its
/// columns in order (false otherwise: the tiles do it). Each value of `y` is summed along `k`
/// in order with the tiles' `madd`, so it has the bits the tiles give it. Row-major `w`: 16
/// columns (a cache line of each row) at a time. Column-major `w` (a transposed view: the output
/// head's (V, D) weight): 4 columns at a time, 4 steps of `k` loaded from each and turned into
/// 4 registers of one step each.
fn one_row(x: &[f32], w: ArrayView2<f32>, y: &mut [f32]) -> bool {
    let (k, n) = w.dim();
    let (rs, cs) = (w.strides()[0], w.strides()[1]);
    if k == 0 || n == 0 || rs < 0 || cs < 0 {
        return false;
    }
    let (rs, cs) = (rs as usize, cs as usize);
    let base = w.as_ptr();
    if cs == 1 {
        let mut j0 = 0;
        while j0 + 16 <= n {
            let mut c = [f32x4_splat(0.0); 4];
            for (kk, &xv) in x.iter().enumerate() {
                let a = f32x4_splat(xv);
                // SAFETY: kk < k and j0 + 16 <= n, so the 16 floats from w[kk, j0] are in w's
                // row kk, which w's view borrows; wasm loads need no alignment
                unsafe {
                    let p = base.add(kk * rs + j0);
                    for (q, c) in c.iter_mut().enumerate() {
                        *c = madd(a, v128_load(p.add(4 * q).cast()), *c);
                    }
                }
            }
            for (q, c) in c.iter().enumerate() {
                let mut out = [0.0f32; 4];
                // SAFETY: writes the 16 bytes of `out`, which it owns
                unsafe { v128_store(out.as_mut_ptr().cast(), *c) };
                y[j0 + 4 * q..j0 + 4 * q + 4].copy_from_slice(&out);
            }
            j0 += 16;
        }
        // the last columns, up to 4 at a time, their values gathered into a register
        while j0 < n {
            let cols = 4.min(n - j0);
            let mut c = f32x4_splat(0.0);
            for (kk, &xv) in x.iter().enumerate() {
                let mut b = [0.0f32; 4];
                for (q, b) in b[..cols].iter_mut().enumerate() {
                    *b = w[[kk, j0 + q]];
                }
                // SAFETY: reads the 16 bytes of `b`, which it owns
                c = madd(f32x4_splat(xv), unsafe { v128_load(b.as_ptr().cast()) }, c);
            }
            let mut out = [0.0f32; 4];
            // SAFETY: writes the 16 bytes of `out`, which it owns
            unsafe { v128_store(out.as_mut_ptr().cast(), c) };
            y[j0..j0 + cols].copy_from_slice(&out[..cols]);
            j0 += cols;
        }
        return true;
    }
    if rs == 1 {
        let mut j0 = 0;
        while j0 < n {
            let cols = 4.min(n - j0);
            // the columns' starts; a missing fourth reads the first again, and is not stored
            let at: [usize; 4] = core::array::from_fn(|q| (j0 + q.min(cols - 1)) * cs);
            let mut c = f32x4_splat(0.0);
            let mut kk = 0;
            while kk + 4 <= k {
                // SAFETY: kk + 4 <= k and every column j0 + q < n, so the 4 floats from
                // w[kk, j] lie in column j, contiguous in memory, which w's view borrows
                unsafe {
                    let r: [v128; 4] = core::array::from_fn(|q| v128_load(base.add(at[q] + kk).cast()));
                    let lo01 = i32x4_shuffle::<0, 4, 1, 5>(r[0], r[1]);
                    let lo23 = i32x4_shuffle::<0, 4, 1, 5>(r[2], r[3]);
                    let hi01 = i32x4_shuffle::<2, 6, 3, 7>(r[0], r[1]);
                    let hi23 = i32x4_shuffle::<2, 6, 3, 7>(r[2], r[3]);
                    let steps = [
                        i32x4_shuffle::<0, 1, 4, 5>(lo01, lo23),
                        i32x4_shuffle::<2, 3, 6, 7>(lo01, lo23),
                        i32x4_shuffle::<0, 1, 4, 5>(hi01, hi23),
                        i32x4_shuffle::<2, 3, 6, 7>(hi01, hi23),
                    ];
                    for (t, b) in steps.into_iter().enumerate() {
                        c = madd(f32x4_splat(x[kk + t]), b, c);
                    }
                }
                kk += 4;
            }
            while kk < k {
                // SAFETY: kk < k and every column index is below n: inside w's view
                let b: [f32; 4] = core::array::from_fn(|q| unsafe { *base.add(at[q] + kk) });
                // SAFETY: reads the 16 bytes of `b`, which it owns
                c = madd(f32x4_splat(x[kk]), unsafe { v128_load(b.as_ptr().cast()) }, c);
                kk += 1;
            }
            let mut out = [0.0f32; 4];
            // SAFETY: writes the 16 bytes of `out`, which it owns
            unsafe { v128_store(out.as_mut_ptr().cast(), c) };
            y[j0..j0 + cols].copy_from_slice(&out[..cols]);
            j0 += cols;
        }
        return true;
    }
    false
}

/// `a · b + c`, fused where the build has relaxed SIMD.
#[inline(always)]
fn madd(a: v128, b: v128, c: v128) -> v128 {
    #[cfg(target_feature = "relaxed-simd")]
    return f32x4_relaxed_madd(a, b, c);
    #[cfg(not(target_feature = "relaxed-simd"))]
    return f32x4_add(c, f32x4_mul(a, b));
}

/// Eight floats into two registers.
#[inline(always)]
fn load(v: &[f32; NR]) -> [v128; 2] {
    // SAFETY: reads the 32 bytes of `v`, which it borrows; wasm loads need no alignment
    unsafe { [v128_load(v.as_ptr().cast()), v128_load(v.as_ptr().add(4).cast())] }
}

/// Two registers' eight floats.
#[inline(always)]
fn store(c: [v128; 2]) -> [f32; NR] {
    let mut v = [0.0f32; NR];
    // SAFETY: writes the 32 bytes of `v`, which it owns; no alignment needed
    unsafe {
        v128_store(v.as_mut_ptr().cast(), c[0]);
        v128_store(v.as_mut_ptr().add(4).cast(), c[1]);
    }
    v
}
