//! Asking for the next panel of `w` while the tiles work on this one.
//!
//! From `MIN_ROWS_TO_PACK` rows each panel of `w` is copied as its first tiles read it, and the
//! copy (then a pass of its own) read `w` from memory: at 128 tokens it held a seventh of the
//! products' samples in `perf`, waiting on its loads. Asked for while the tiles' multiply–adds
//! run, the rows of the next panel are on their way to the second-level cache when the copy
//! comes. MiniLM natively took 0.98 of the time at 128 and 512 tokens on one thread, 0.97 on
//! two (per-round ratios). With the copy made by the first tiles it still pays: 128 × 384 ·
//! 384 × 1536 alone, its weights cold, ran 1 to 2 % faster with it.
//! Below it, from `MIN_ROWS_AHEAD` rows, the tiles read `w` in place from the second-level
//! cache, and ask for the next panel the same way (0.92 at 16 tokens).

use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};

use super::Parts;

/// The rows of the next panel of `w`, which its first tiles (or `pack`, for a last narrow
/// strip) read to copy it, asked for a few at a time while the tiles work on this panel.
pub(super) struct Ahead {
    /// The next panel's first value, its rows `row` apart and `floats` long.
    from: *const f32,
    row: usize,
    floats: usize,
    /// Rows asked for so far, of `rows`, and how many each tile's strip asks for.
    done: usize,
    rows: usize,
    each: usize,
}

impl Ahead {
    /// For the panel of `kc` steps from `k0` and `width` columns from `n0`, its rows spread
    /// over `slots` calls of [`Ahead::next`].
    pub(super) fn new(p: &Parts, (k0, kc): (usize, usize), (n0, width): (usize, usize), slots: usize) -> Ahead {
        Ahead {
            // inside `w`: the panel is one of its panels
            from: p.w.wrapping_add(k0 * p.w_row + n0),
            row: p.w_row,
            floats: width,
            done: 0,
            rows: kc,
            each: kc.div_ceil(slots.max(1)),
        }
    }

    /// Asks for the next few rows, each a run of cache lines.
    pub(super) fn next(&mut self) {
        let till = self.rows.min(self.done + self.each);
        for r in self.done..till {
            let start = self.from.wrapping_add(r * self.row) as usize;
            let end = start + self.floats * 4;
            for line in (start & !63..end).step_by(64) {
                // SAFETY: a prefetch never faults, and the address is only computed
                unsafe { _mm_prefetch::<_MM_HINT_T1>(line as *const i8) };
            }
        }
        self.done = till;
    }
}
