//! AttentionViz's joint embedding of queries and keys (Yeh et al., 2023, §5.1.1): two changes
//! that leave every softmax as it was, after which distance in the picture follows the dot
//! product.
//!
//! - **Translation.** Adding one vector s to every key adds q·s to a whole row of scores, which
//!   the softmax ignores. s = mean(Q) − mean(K) puts the keys' centroid on the queries'.
//! - **Scaling.** Q·c and K/c leave every q·k as it was. c = ⁴√(mean‖k‖² / mean‖q‖²), after
//!   the translation, gives both sides the same root-mean-square norm. (AttentionViz matches
//!   the mean norms; the mean squares follow from sums that can be added up sentence by
//!   sentence, so a corpus of any size gets its exact picture in one pass: [`super::moments`].)
//!
//! Then ‖q − k‖² = ‖q‖² + ‖k‖² − 2 q·k: near in the picture is a large product, as far as
//! the norms allow. [`correlation`] measures how far, per head: the model's own q·k against
//! distance in the picture.

use ndarray::{Array1, Array2, ArrayView2};

use super::moments::Moments;

/// Queries and keys of one head after the two changes.
#[derive(Debug, Clone, PartialEq)]
pub struct Joint {
    pub queries: Array2<f32>, // (Nq, d_k)
    pub keys: Array2<f32>,    // (Nk, d_k)
    /// What was added to every key, before the scaling: mean(Q) − mean(K).
    pub shift: Array1<f32>,
    /// What the queries were multiplied by and the keys divided by.
    pub scale: f32,
}

/// The joint embedding of `queries` (Nq, d_k) and `keys` (Nk, d_k).
pub fn normalize(queries: ArrayView2<f32>, keys: ArrayView2<f32>) -> Joint {
    let (shift, scale) = match Moments::of(queries, keys) {
        Ok(m) => m.shift_scale(),
        Err(_) => (Array1::zeros(queries.ncols()), 1.0), // sides of different widths: nothing to join
    };
    apply(queries, keys, shift.mapv(|x| x as f32), scale as f32)
}

/// `shift` added to every key, then the queries multiplied by `scale` and the keys divided.
pub fn apply(queries: ArrayView2<f32>, keys: ArrayView2<f32>, shift: Array1<f32>, scale: f32) -> Joint {
    let mut keys = &keys + &shift;
    keys /= scale;
    Joint { queries: &queries * scale, keys, shift, scale }
}

/// How well nearness in a picture follows the model's scores: for each query, Pearson's r
/// between its q·k and −‖q − k‖ over the keys it may see, averaged over the queries with at
/// least two such keys (1: the nearest keys are the ones it scores highest). Per query,
/// because the softmax compares a query's keys with each other only: the translation changes
/// q·k by a constant per query, which leaves each row's r as it was. `scores` are the vectors
/// the model multiplies, `points` the ones drawn (the same, or their joint embedding); `pairs`
/// (query row, key row) come query by query. None when no query has two keys with spread.
pub fn correlation(
    scores: [ArrayView2<f32>; 2],
    points: [ArrayView2<f32>; 2],
    pairs: &[(usize, usize)],
) -> Option<f32> {
    let (mut sum, mut rows) = (0f64, 0usize);
    for row in pairs.chunk_by(|a, b| a.0 == b.0) {
        let r = pearson(row.iter().map(|&(i, j)| {
            let dot = f64::from(scores[0].row(i).dot(&scores[1].row(j)));
            let (q, k) = (points[0].row(i), points[1].row(j));
            (dot, -q.iter().zip(k.iter()).map(|(a, b)| f64::from(a - b).powi(2)).sum::<f64>().sqrt())
        }));
        if let Some(r) = r {
            sum += r;
            rows += 1;
        }
    }
    (rows > 0).then(|| (sum / rows as f64) as f32)
}

/// Pearson's r of (x, y) pairs; None with fewer than two or no spread.
fn pearson(xy: impl Iterator<Item = (f64, f64)>) -> Option<f64> {
    let (mut n, mut sx, mut sy, mut sxx, mut syy, mut sxy) = (0f64, 0f64, 0f64, 0f64, 0f64, 0f64);
    for (x, y) in xy {
        n += 1.0;
        sx += x;
        sy += y;
        sxx += x * x;
        syy += y * y;
        sxy += x * y;
    }
    let (vx, vy) = (sxx - sx * sx / n, syy - sy * sy / n);
    if n < 2.0 || vx <= 1e-12 * sxx.max(1e-30) || vy <= 1e-12 * syy.max(1e-30) {
        return None;
    }
    Some(((sxy - sx * sy / n) / (vx * vy).sqrt()).clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use ndarray::Axis;

    use super::*;
    use crate::rng::SplitMix64 as Rng;

    fn random(rng: &mut Rng, rows: usize, cols: usize, offset: f32, spread: f32) -> Array2<f32> {
        Array2::from_shape_fn((rows, cols), |_| offset + spread * rng.next_signed())
    }

    fn softmax(row: &[f32]) -> Vec<f32> {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let e: Vec<f32> = row.iter().map(|x| (x - max).exp()).collect();
        let sum: f32 = e.iter().sum();
        e.iter().map(|x| x / sum).collect()
    }

    #[test]
    fn the_changes_leave_every_softmax_row_as_it_was() {
        let mut rng = Rng::new(3);
        for case in 0..20 {
            let d = 2 + case % 7;
            let (q, k) = (random(&mut rng, 9, d, 0.5, 2.0), random(&mut rng, 11, d, -3.0, 0.3 + case as f32));
            let joint = normalize(q.view(), k.view());
            for i in 0..q.nrows() {
                let before: Vec<f32> = (0..k.nrows()).map(|j| q.row(i).dot(&k.row(j))).collect();
                let after: Vec<f32> = (0..k.nrows()).map(|j| joint.queries.row(i).dot(&joint.keys.row(j))).collect();
                for (a, b) in softmax(&before).iter().zip(softmax(&after)) {
                    assert!((a - b).abs() < 1e-5, "case {case} row {i}: {a} vs {b}");
                }
            }
        }
    }

    #[test]
    fn centroids_meet_and_mean_square_norms_match() {
        let mut rng = Rng::new(5);
        let (q, k) = (random(&mut rng, 40, 8, 1.0, 1.0), random(&mut rng, 30, 8, -5.0, 4.0));
        let joint = normalize(q.view(), k.view());
        let (mq, mk) = (joint.queries.mean_axis(Axis(0)).unwrap(), joint.keys.mean_axis(Axis(0)).unwrap());
        for (a, b) in mq.iter().zip(mk.iter()) {
            assert!((a - b * joint.scale * joint.scale).abs() < 1e-4, "{a} vs {b}");
        }
        let mean_square = |x: &Array2<f32>| x.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>() / x.nrows() as f64;
        let (nq, nk) = (mean_square(&joint.queries), mean_square(&joint.keys));
        assert!((nq - nk).abs() < 1e-4 * nq, "{nq} vs {nk}");
    }

    #[test]
    fn correlation_is_near_one_for_unit_vectors_and_none_without_spread() {
        // On unit vectors ‖q − k‖ = √(2 − 2 q·k): a decreasing function of q·k, so the ranks
        // agree and Pearson's r is near 1 (not 1: the function is not linear).
        let angles = [0.0f32, 0.4, 0.9, 1.3, 2.0, 2.6, 3.0];
        let q = Array2::from_shape_fn((1, 2), |(_, c)| if c == 0 { 1.0 } else { 0.0 });
        let k =
            Array2::from_shape_fn((angles.len(), 2), |(j, c)| if c == 0 { angles[j].cos() } else { angles[j].sin() });
        let pairs: Vec<_> = (0..angles.len()).map(|j| (0, j)).collect();
        let both = [q.view(), k.view()];
        assert!(correlation(both, both, &pairs).unwrap() > 0.95);
        assert_eq!(correlation(both, both, &pairs[..1]), None);
        assert_eq!(correlation([q.view(), q.view()], [q.view(), q.view()], &[(0, 0), (0, 0)]), None);
    }
}
