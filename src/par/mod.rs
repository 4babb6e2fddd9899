//! Threads: where the forward splits its work, and how many threads it uses.
//!
//! Four places run in parallel when more than one thread is there: the batch rows of a padded
//! batch ([`map_batch`]), the heads of a layer (`attention::multi_head`: each head's QKᵀ →
//! softmax → ·V is independent), the rows or columns of a large product ([`product_then`],
//! with what follows it on the same values: bias, activation) and the rows of the per-row passes
//! ([`rows_mut`]: layer norm, RMS norm). Each piece of work does the same arithmetic in the
//! same order whatever thread runs it, so the weights are the same, bit for bit, with one
//! thread or many (`tests/threads.rs`). A forward runs on its caller's thread with the pool's
//! threads helping ([`beside`]).
//!
//! The threads are rayon's: natively its global pool, sized by `HEADMAP_THREADS` (the
//! machine's cores when unset) or by [`set_threads`] (the command line's `--threads`); in the
//! browser's threaded build the pool `initThreadPool(n)` starts. A caller can also run a piece
//! of work in its own pool ([`pool`] and `ThreadPool::install`). With one thread nothing is
//! split and no task is spawned. `HEADMAP_THREADS` is read once, at the first [`threads`]: a
//! process that used rayon before keeps the pool it started.
//! The toy-only build has no threads at all.

use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};

use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis};

use crate::error::Result;

/// Products smaller than this many multiply–adds run on one thread: below it the split costs
/// more than it saves.
pub const PRODUCT_SPLIT_FLOPS: usize = 1 << 20;

/// Fewer rows than this to a thread and a split by rows costs more than it saves: at 16 tokens
/// MiniLM's products split in two took longer than whole in the threaded wasm build
/// (`docs/perf-notes.md`). A short text's products split by columns instead, beside the pool's
/// helpers ([`beside`]), where a helper still asleep costs nothing.
pub const MIN_ROWS_PER_THREAD: usize = 32;

/// A per-row pass ([`rows_mut`]) splits when it covers at least this many values: a layer
/// norm of 128 tokens × 384 does.
pub const ROWS_SPLIT_VALUES: usize = 1 << 15;

/// A layer's heads go to threads when their products together are at least this many
/// multiply–adds (H · Tq · Tk · d_k): at 16 tokens MiniLM's heads stay on one thread.
pub const HEADS_SPLIT_FLOPS: usize = 1 << 18;

/// A product whose rows give each thread fewer than this many splits by columns: each thread
/// then reads its part of the weights, not all of them, and each part serves every row (a
/// generation step's one row over the vocabulary; see also [`COLUMN_SPLIT_FLOPS`]). Past it
/// rows split better (at 128 and 512 tokens columns were 4 % and 8 % slower;
/// `docs/perf-notes.md`). In wasm only work with helpers ([`beside`]) splits by columns: the
/// page's other thresholds were measured with rows alone.
pub const COLUMNS_BELOW_ROWS: usize = 64;

/// A product splits by columns from this many multiply–adds, or from [`PRODUCT_SPLIT_FLOPS`]
/// when its thread has helpers ([`beside`]). Handed to the pool, a short text's products
/// (MiniLM's at 16 tokens, 2–9 million) were faster split while the threads were awake (1.7 ms
/// against 2.3 a forward on two threads) and slower once the pool had been idle a while (4.1
/// against 3.0): waking a thread that slept costs milliseconds on this machine. With helpers
/// the caller never waits for one to wake, and MiniLM at 16 tokens on two threads took 0.73 of
/// its time unsplit, interleaved with other processes so that the pool slept between forwards.
pub const COLUMN_SPLIT_FLOPS: usize = 1 << 24;

/// Pieces of columns a thread, for a product split with helpers ([`beside`]). In the page two: a
/// helper that comes late still finds one, and one that is held up holds back less of the
/// product (MiniLM at 16 tokens on two threads in Chromium: 0.78 of the unsplit time per round,
/// where one piece a thread was no faster, 1.04). Natively one: two took 1.12 of its time.
#[cfg(target_arch = "wasm32")]
pub const HELPED_PIECES_PER_THREAD: usize = 2;
#[cfg(not(target_arch = "wasm32"))]
pub const HELPED_PIECES_PER_THREAD: usize = 1;

/// A piece of columns starts at a multiple of this: a whole number of the kernels' widest
/// tiles (32 columns), so a column is in a whole tile or the last partial one as it is in the
/// whole product.
pub const COLUMN_STEP: usize = 32;

static SPLIT_ALL: AtomicBool = AtomicBool::new(false);

/// Splits work of any size, however small, for the rest of the process: what the tests use to
/// run the split paths on tiny models (`tests/threads.rs`) and the benches to measure the
/// thresholds. The results are the same either way; only the time differs.
pub fn split_everything(on: bool) {
    SPLIT_ALL.store(on, Ordering::Relaxed);
}

/// `flops` of work is worth splitting when it is at least `threshold` multiply–adds.
pub fn worth_splitting(flops: usize, threshold: usize) -> bool {
    flops >= threshold || SPLIT_ALL.load(Ordering::Relaxed)
}

/// The threads the forward may use here: 1 when the build has none.
pub fn threads() -> usize {
    imp::threads()
}

/// Sets the number of threads for the rest of the process (the command line's `--threads`):
/// refused when the pool has already started with another count.
pub fn set_threads(n: usize) -> Result<()> {
    imp::set_threads(n)
}

/// A pool of `n` threads of its own, for a caller that compares thread counts in one process.
#[cfg(feature = "hf")]
pub fn pool(n: usize) -> Result<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n.max(1))
        .build()
        .map_err(|e| crate::error::Error::Thread { reason: e.to_string() })
}

/// `f` on this thread, with the pool's other threads asked to help with the pieces it splits
/// ([`map`], [`map_owned`], the products, the per-row passes) as they come: what a forward and
/// a generation's step run in (`Model::run_batch`, `Writer::step`). This thread takes every
/// piece no helper has taken, so a helper that has not woken yet costs nothing, and this thread
/// never sleeps waiting for the pool. One such call at a time has the helpers: another thread's
/// at the same time, or one already on a pool's thread (a corpus spread over a pool), runs `f`
/// as it is, and rayon splits its work.
///
/// A pool idle for a while sleeps, and on a virtual machine whose cores were idle too, waking a
/// thread costs milliseconds. Until stop 65 a forward of 64 rows or more and every generation
/// step were handed to a pool thread instead, which paid that twice: once for the thread that
/// ran it and once for the caller, woken at its end. MiniLM at 128 tokens on two threads, each
/// forward after 20 ms with nothing running, took 1.12–1.63 of one thread's time handed in and
/// 0.64 beside; back to back, 0.60 and 0.59. A generation step of GPT-2-small's shape in
/// Chromium on two threads took 0.54 of one thread's time beside, 0.94 handed in
/// (`docs/perf-notes.md`).
pub fn beside<R>(f: impl FnOnce() -> R) -> R {
    imp::beside(f)
}

/// `f` over `items`, in order; in parallel when there are threads and more than one item.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    imp::map(items, f)
}

/// `f` over the rows of a padded batch, in order, each row a forward whose products, heads and
/// norms split again. With helpers ([`beside`]) the rows go out as pieces in whole rounds, as
/// many rows as threads, and the rows left over, when they are at most half the threads, run
/// one after another on this thread, each split over every helper. Given out as pieces they
/// would not be: a helper runs its own piece's splits in turn ([`helping`]), so with two rows
/// on eight threads the helper holding the second row ran it alone, as long as one thread
/// takes, while the six others helped only with the first. More rows left over than half the
/// threads go out as pieces too: one after another, each would need its splits to pay more
/// than they do (16 tokens split over two threads took 0.68–1.00 of one thread's time, the
/// more of it the longer the threads had been idle).
pub fn map_batch<T: Sync, R: Send>(rows: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    if !helped() {
        return map(rows, f);
    }
    let threads = threads();
    let mut whole = rows.len() / threads * threads;
    if (rows.len() - whole) * 2 > threads {
        whole = rows.len();
    }
    let (rounds, rest) = rows.split_at(whole);
    let mut out = map(rounds, &f);
    out.extend(rest.iter().map(&f));
    out
}

/// [`map`] over items it owns (each a piece of something to write, say).
pub fn map_owned<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync + Send) -> Vec<R> {
    imp::map_owned(items, f)
}

/// Whether this thread runs work with the pool's threads helping ([`beside`]): work split
/// through [`map`], [`map_owned`] and the products goes to them, rayon's own splits would not.
pub fn helped() -> bool {
    imp::helped()
}

/// Whether this thread helps with another's work ([`beside`]): its pieces' splits run on it in
/// turn.
pub fn helping() -> bool {
    imp::helping()
}

/// `x · w`, split by rows or columns across the threads when the product is large enough.
/// Each value's sum is the one the whole product makes (the kernels sum along d_in in the same
/// order whatever values are beside it), so the result does not depend on the split.
pub fn product(x: ArrayView2<f32>, w: ArrayView2<f32>) -> Array2<f32> {
    product_then(x, w, |_, _| {})
}

/// [`product`], then `then` on each piece of the result by the thread that made it, while
/// it is in its cache (a bias, an activation), with the columns the piece holds: `then` must
/// treat every row alike. A product splits by rows where each thread gets many of them; one of
/// few rows splits by columns instead (see [`COLUMNS_BELOW_ROWS`]; in the page only beside
/// helpers).
pub fn product_then(
    x: ArrayView2<f32>,
    w: ArrayView2<f32>,
    then: impl Fn(ArrayViewMut2<f32>, Range<usize>) + Sync + Send,
) -> Array2<f32> {
    // rows laid out in order, so that every piece takes the same kernel as the whole would
    let x = x.as_standard_layout();
    let x = x.view();
    let (rows, d_in, d_out) = (x.nrows(), x.ncols(), w.ncols());
    // zeroed piece by piece, by the thread that computes the piece (`product_uninit`)
    let mut y = Array2::uninit((rows, d_out));
    let flops = rows.saturating_mul(d_in).saturating_mul(d_out);
    let pieces = if threads() > 1 && !imp::helping() && worth_splitting(flops, PRODUCT_SPLIT_FLOPS) {
        let page = cfg!(target_arch = "wasm32");
        let columns = columns_per_piece(rows, d_out)
            .filter(|_| imp::helped() || (!page && worth_splitting(flops, COLUMN_SPLIT_FLOPS)));
        let chunk = rows_per_piece(rows);
        if let Some(width) = columns {
            let pieces: Vec<_> =
                w.axis_chunks_iter(Axis(1), width).zip(y.axis_chunks_iter_mut(Axis(1), width)).enumerate().collect();
            imp::each(pieces, |(i, (w, y))| {
                let first = i * width;
                then(product_uninit(x, w, y), first..first + w.ncols());
            });
            true
        } else if chunk < rows {
            let pieces: Vec<_> =
                x.axis_chunks_iter(Axis(0), chunk).zip(y.axis_chunks_iter_mut(Axis(0), chunk)).collect();
            imp::each(pieces, |(x, y)| then(product_uninit(x, w, y), 0..d_out));
            true
        } else {
            false
        }
    } else {
        false
    };
    if !pieces {
        then(product_uninit(x, w, y.view_mut()), 0..d_out);
    }
    // SAFETY: the pieces, or the whole, cover every value of `y`, and `product_uninit` wrote
    // each of them
    unsafe { y.assume_init() }
}

/// The columns of a piece when a product of `rows` rows and `d_out` columns splits by columns:
/// about one piece a thread, each a multiple of [`COLUMN_STEP`]; none when it splits by rows.
fn columns_per_piece(rows: usize, d_out: usize) -> Option<usize> {
    let threads = threads();
    let few_rows = rows.div_ceil(threads) < COLUMNS_BELOW_ROWS;
    let pieces = if imp::helped() { HELPED_PIECES_PER_THREAD * threads } else { threads };
    let width = d_out.div_ceil(pieces).next_multiple_of(COLUMN_STEP);
    (few_rows && width < d_out).then_some(width)
}

/// `f` on pieces of `y`'s rows, on the threads when `y` is large enough: for passes that treat
/// each row on its own (a norm), whose values then do not depend on the split.
pub fn rows_mut(mut y: ArrayViewMut2<f32>, f: impl Fn(ArrayViewMut2<f32>) + Sync + Send) {
    let Some(chunk) = rows_split(y.nrows(), y.len()) else { return f(y) };
    imp::each(y.axis_chunks_iter_mut(Axis(0), chunk).collect(), f);
}

/// [`rows_mut`] with the same rows of `x` beside each piece of `y`'s: for a pass that reads a
/// second array row by row (a residual added before a norm). `x` has `y`'s shape.
pub fn rows_mut_beside(
    mut y: ArrayViewMut2<f32>,
    x: ArrayView2<f32>,
    f: impl Fn(ArrayViewMut2<f32>, ArrayView2<f32>) + Sync + Send,
) {
    assert!(y.dim() == x.dim(), "rows beside rows of another shape");
    let Some(chunk) = rows_split(y.nrows(), y.len()) else { return f(y, x) };
    imp::each(y.axis_chunks_iter_mut(Axis(0), chunk).zip(x.axis_chunks_iter(Axis(0), chunk)).collect(), |(y, x)| {
        f(y, x)
    });
}

/// The rows of a piece when a per-row pass over `rows` rows and `values` values splits across
/// the threads; none when it stays whole. One thread is asked about first: the toy build, which
/// has one, then leaves the split code out of its download.
fn rows_split(rows: usize, values: usize) -> Option<usize> {
    if threads() == 1 || !worth_splitting(values, ROWS_SPLIT_VALUES) {
        return None;
    }
    let chunk = rows_per_piece(rows);
    (chunk < rows).then_some(chunk)
}

/// About one piece a thread, each a multiple of 8 rows (whole tiles of matrixmultiply's
/// kernel; ours gives a row the same bits in any tile) and, unless the tests split everything,
/// at least [`MIN_ROWS_PER_THREAD`].
fn rows_per_piece(rows: usize) -> usize {
    let least = if SPLIT_ALL.load(Ordering::Relaxed) { 1 } else { MIN_ROWS_PER_THREAD };
    rows.div_ceil(threads()).max(least).next_multiple_of(8)
}

/// `x · w` into a new array, on this thread: a head's products (the head has its thread).
pub fn product_here(x: ArrayView2<f32>, w: ArrayView2<f32>) -> Array2<f32> {
    let mut y = Array2::zeros((x.nrows(), w.ncols()));
    product_into(x, w, &mut y.view_mut());
    y
}

/// [`product_into`] into `y`'s memory, which need not hold values yet: zeroed first by the
/// thread that computes it, every value then written, and `y` given back as values. Zeroing
/// pays natively even though the kernels store before they read: it brings `y` into the cache
/// faster than the kernels' stores strip by strip (at 512 tokens one thread took 5 % longer
/// without it); here it is split across the threads with the product.
fn product_uninit<'a>(
    x: ArrayView2<f32>,
    w: ArrayView2<f32>,
    mut y: ArrayViewMut2<'a, MaybeUninit<f32>>,
) -> ArrayViewMut2<'a, f32> {
    y.fill(MaybeUninit::new(0.0));
    // SAFETY: every value was just written
    let mut y = unsafe { y.assume_init() };
    product_into(x, w, &mut y);
    y
}

/// `y = x · w` on this thread: our own kernels ([`crate::gemm`]) natively and in the real-model
/// wasm; the toy-only build keeps matrixmultiply's, a smaller download.
pub fn product_into(x: ArrayView2<f32>, w: ArrayView2<f32>, y: &mut ArrayViewMut2<f32>) {
    #[cfg(any(not(target_arch = "wasm32"), feature = "hf"))]
    crate::gemm::product_into(x, w, y);
    #[cfg(not(any(not(target_arch = "wasm32"), feature = "hf")))]
    ndarray::linalg::general_mat_mul(1.0, &x, &w, 0.0, y);
}

/// The first error of `results`, or every value in order.
pub fn all<R>(results: Vec<Result<R>>) -> Result<Vec<R>> {
    results.into_iter().collect()
}

#[cfg(feature = "hf")]
#[path = "pool.rs"]
mod imp;

#[cfg(not(feature = "hf"))]
mod imp {
    use crate::error::{Error, Result};

    pub fn threads() -> usize {
        1
    }

    pub fn set_threads(n: usize) -> Result<()> {
        match n {
            0 | 1 => Ok(()),
            _ => Err(Error::Thread { reason: "this build has no threads".into() }),
        }
    }

    pub fn beside<R>(f: impl FnOnce() -> R) -> R {
        f()
    }

    pub fn helped() -> bool {
        false
    }

    pub fn helping() -> bool {
        false
    }

    pub fn map_owned<T, R>(items: Vec<T>, f: impl Fn(T) -> R) -> Vec<R> {
        items.into_iter().map(f).collect()
    }

    pub fn map<T, R>(items: &[T], f: impl Fn(&T) -> R) -> Vec<R> {
        items.iter().map(f).collect()
    }

    pub fn each<T>(items: Vec<T>, f: impl Fn(T)) {
        items.into_iter().for_each(f);
    }
}

#[cfg(all(test, feature = "hf"))]
mod tests;
