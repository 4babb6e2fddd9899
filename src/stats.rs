//! Numbers read off attention weights.

use std::ops::Range;

use ndarray::{Array1, Array2, ArrayView2, ArrayView3, ArrayView4, Axis};

/// Shannon entropy, in bits, of every query row of every head: (H, Tq, Tk) → (H, Tq).
///
/// A row that puts all its weight on one key has 0 bits; one spread evenly over n keys has
/// log₂ n. Without ÷√d_k the rows of a wide model collapse toward 0 bits: the saturation the
/// paper scales against. A fully masked row (all zeros) has 0 bits.
pub fn row_entropy_bits(weights: ArrayView3<f32>) -> Array2<f32> {
    let (heads, tq, _) = weights.dim();
    let mut out = Array2::zeros((heads, tq)); // (H, Tq)
    for (h, head) in weights.axis_iter(Axis(0)).enumerate() {
        for (i, row) in head.axis_iter(Axis(0)).enumerate() {
            out[[h, i]] = row.iter().filter(|&&p| p > 0.0).map(|&p| -p * p.log2()).sum();
        }
    }
    out
}

/// The most entropy each query row of a (Tq, Tk) mask can have, in bits: log₂ of how many keys
/// it may see (a uniform row over them), 0 for a row that sees none.
pub fn entropy_limits(allowed: ArrayView2<bool>) -> Array1<f32> {
    allowed.rows().into_iter().map(|row| (row.iter().filter(|&&a| a).count() as f32).log2().max(0.0)).collect()
}

/// The largest weight of every head: (L, H, Tq, Tk) → (L, H), for colour ranges.
pub fn head_maxima(weights: ArrayView4<f32>) -> Array2<f32> {
    let (layers, heads, _, _) = weights.dim();
    Array2::from_shape_fn((layers, heads), |(l, h)| {
        weights.slice(ndarray::s![l, h, .., ..]).iter().copied().fold(0.0f32, f32::max)
    })
}

/// Shrinks a (Tq, Tk) weight matrix to (out_h, out_w) pixels for drawing: each pixel keeps
/// the largest visible weight of the cells it covers, so a sharp head stays visible when there
/// are more tokens than pixels; -1 marks a pixel whose cells are all masked. Cell (i, j) falls
/// in pixel (i·out_h / Tq, j·out_w / Tk).
pub fn max_pool(
    weights: ArrayView2<f32>,
    allowed: Option<ArrayView2<bool>>,
    out_h: usize,
    out_w: usize,
) -> Array2<f32> {
    let (out_h, out_w) = (out_h.max(1), out_w.max(1));
    let pixels = max_pool_rows(weights, allowed, out_h, out_w, 0..out_h);
    Array2::from_shape_vec((out_h, out_w), pixels).unwrap_or_else(|_| Array2::from_elem((out_h, out_w), -1.0))
}

/// The pixel rows `rows` of [`max_pool`], row-major: a band of the picture, so that bands can
/// be pooled on different threads (each pixel is the largest of its own cells, so the bands
/// join into the whole picture's values exactly).
pub fn max_pool_rows(
    weights: ArrayView2<f32>,
    allowed: Option<ArrayView2<bool>>,
    out_h: usize,
    out_w: usize,
    rows: Range<usize>,
) -> Vec<f32> {
    let (tq, tk) = weights.dim();
    let (out_h, out_w) = (out_h.max(1), out_w.max(1));
    let (y0, y1) = (rows.start.min(out_h), rows.end.clamp(rows.start.min(out_h), out_h));
    // (y1 - y0, out_w), row-major
    let mut pixels = vec![-1.0f32; (y1 - y0) * out_w];
    if allowed.is_some_and(|a| a.dim() != (tq, tk)) {
        return pixels; // a mask of another shape lets nothing through
    }
    // rows in order (as every run's weights and masks are already), each one slice
    let (weights, allowed) = (weights.as_standard_layout(), allowed.as_ref().map(|a| a.as_standard_layout()));
    // a standard layout is one slice: never the early returns
    let Some(weights) = weights.as_slice() else { return pixels };
    let allowed = match allowed.as_ref().map(|a| a.as_slice()) {
        Some(None) => return pixels,
        a => a.flatten(),
    };
    // key j falls in pixel column j·out_w / Tk: column x's keys are one run, from ⌈x·Tk / out_w⌉
    let starts: Vec<usize> = (0..out_w + 1).map(|x| (x * tk).div_ceil(out_w)).collect();
    // query i falls in pixel row i·out_h / Tq: the band's queries are one run of them
    for i in (y0 * tq).div_ceil(out_h)..(y1 * tq).div_ceil(out_h) {
        let row = &mut pixels[(i * out_h / tq - y0) * out_w..][..out_w];
        for (x, pixel) in row.iter_mut().enumerate() {
            let keys = i * tk + starts[x]..i * tk + starts[x + 1];
            *pixel = largest_allowed(&weights[keys.clone()], allowed.map(|a| &a[keys]), *pixel);
        }
    }
    pixels
}

/// The largest of `values` that `allowed` lets through (all without it), or `start` if none is
/// larger: what `if allowed && v > m { m = v }` gives in order, in 8 lanes the compiler keeps
/// in registers side by side (a thumbnail of every head of a 2,000-token text reads a billion
/// weights: 0.4 of the time of the plain loop natively). Each lane only grows, and a masked
/// value stands in as `start`, which never wins.
#[cfg(feature = "hf")]
fn largest_allowed(values: &[f32], allowed: Option<&[bool]>, start: f32) -> f32 {
    const LANES: usize = 8;
    let pick = |m: f32, v: f32| if v > m { v } else { m };
    let mut lanes = [start; LANES];
    let chunks = values.chunks_exact(LANES);
    let first = values.len() - chunks.remainder().len();
    match allowed {
        Some(allowed) => {
            for (v, a) in chunks.zip(allowed.chunks_exact(LANES)) {
                for l in 0..LANES {
                    lanes[l] = pick(lanes[l], if a[l] { v[l] } else { start });
                }
            }
        }
        None => {
            for v in chunks {
                for l in 0..LANES {
                    lanes[l] = pick(lanes[l], v[l]);
                }
            }
        }
    }
    let m = lanes.into_iter().fold(start, pick);
    largest_in_order(&values[first..], allowed.map(|a| &a[first..]), m)
}

/// [`largest_allowed`] one value at a time, in order: the lanes' last few values, and in the
/// toy-only build the whole of it (its heads are small, and its download smaller so).
fn largest_in_order(values: &[f32], allowed: Option<&[bool]>, start: f32) -> f32 {
    let seen = |j: usize| allowed.is_none_or(|a| a[j]);
    values.iter().enumerate().fold(start, |m, (j, &v)| if seen(j) && v > m { v } else { m })
}

#[cfg(not(feature = "hf"))]
use largest_in_order as largest_allowed;

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn uniform_rows_have_log2_n_bits_and_one_hot_rows_none() {
        let w = array![[[0.25f32, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]];
        let h = row_entropy_bits(w.view());
        assert!((h[[0, 0]] - 2.0).abs() < 1e-6);
        assert_eq!(h[[0, 1]], 0.0);
        assert_eq!(h[[0, 2]], 0.0, "a fully masked row");
    }

    #[test]
    fn pooling_keeps_peaks_and_marks_masked_pixels() {
        let nothing = max_pool(Array2::<f32>::ones((3, 4)).view(), Some(Array2::from_elem((3, 3), true).view()), 2, 2);
        assert_eq!(nothing, Array2::from_elem((2, 2), -1.0), "a mask of another shape lets nothing through");
        let w = array![[0.1f32, 0.9, 0.0, 0.0], [0.2, 0.3, 0.4, 0.1], [0.5, 0.5, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]];
        let allowed = array![
            [true, true, false, false],
            [true, true, false, false],
            [true, true, false, false],
            [true, true, true, true]
        ];
        let p = max_pool(w.view(), Some(allowed.view()), 2, 2);
        assert_eq!(p, array![[0.9f32, -1.0], [0.5, 0.25]]);
        assert_eq!(max_pool(w.view(), None, 4, 4), w, "one cell per pixel changes nothing");
    }

    #[test]
    fn each_pixel_keeps_the_largest_visible_cell_it_covers() {
        // pixels narrower and wider than a cell, runs of keys shorter and longer than the lanes
        let mut rng = crate::rng::SplitMix64::new(7);
        for (tq, tk, out_h, out_w) in
            [(37, 29, 7, 5), (5, 3, 7, 11), (40, 300, 9, 13), (64, 64, 64, 64), (3, 100, 1, 1)]
        {
            let w = Array2::from_shape_simple_fn((tq, tk), || rng.next_signed().abs());
            let allowed = Array2::from_shape_simple_fn((tq, tk), || rng.next_signed() > -0.3);
            for mask in [Some(allowed.view()), None] {
                let want = Array2::from_shape_fn((out_h, out_w), |(y, x)| {
                    let cells = (0..tq).flat_map(|i| (0..tk).map(move |j| (i, j)));
                    cells
                        .filter(|&(i, j)| i * out_h / tq == y && j * out_w / tk == x && mask.is_none_or(|m| m[[i, j]]))
                        .fold(-1.0f32, |m, (i, j)| m.max(w[[i, j]]))
                });
                assert_eq!(max_pool(w.view(), mask, out_h, out_w), want, "{tq}×{tk} into {out_h}×{out_w}");
            }
        }
    }

    #[test]
    fn bands_of_pixel_rows_join_into_the_whole_picture() {
        // 37 × 29 cells into 7 × 5 pixels, a causal mask, bands of every width from 1 to 8 rows
        let w = Array2::from_shape_fn((37, 29), |(i, j)| ((i * 31 + j * 17) % 23) as f32 / 23.0);
        let allowed = Array2::from_shape_fn((37, 29), |(i, j)| j <= i);
        let whole = max_pool(w.view(), Some(allowed.view()), 7, 5);
        for band in 1..=8 {
            let joined: Vec<f32> = (0..7)
                .step_by(band)
                .flat_map(|y| max_pool_rows(w.view(), Some(allowed.view()), 7, 5, y..y + band))
                .collect();
            assert_eq!(joined, whole.as_slice().unwrap(), "bands of {band} rows");
        }
    }

    #[test]
    fn entropy_limits_are_log2_of_the_visible_keys() {
        let allowed = array![[true, false, false, false], [true, true, true, true], [false, false, false, false]];
        assert_eq!(entropy_limits(allowed.view()), array![0.0f32, 2.0, 0.0]);
    }

    #[test]
    fn head_maxima_are_per_layer_and_head() {
        let mut w = ndarray::Array4::<f32>::zeros((2, 3, 2, 2));
        w[[1, 2, 0, 1]] = 0.75;
        w[[0, 0, 1, 1]] = 0.5;
        let m = head_maxima(w.view());
        assert_eq!(m.dim(), (2, 3));
        assert_eq!((m[[1, 2]], m[[0, 0]], m[[0, 1]]), (0.75, 0.5, 0.0));
    }
}
