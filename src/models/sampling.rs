//! How the next token is chosen from a position's logits: greedy decoding (the most likely) or
//! a seeded draw, warped as transformers warps the logits for `generate(do_sample=True)`:
//!
//! ```text
//! logits ÷ temperature → keep the top k → keep the top-p nucleus → softmax → a draw
//! ```

use ndarray::{Array1, ArrayView1};

use super::head::softmax;
use crate::rng::SplitMix64;

/// How the next token is drawn instead of taken greedily, as transformers' `generate(do_sample=True)`
/// warps the logits: temperature, then top-k, then top-p.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// Above 0: the logits are divided by it (below 1 sharper, above 1 flatter).
    pub temperature: f32,
    /// Only the k most likely tokens may be drawn; `None` (or 0) for all.
    pub top_k: Option<usize>,
    /// Only the smallest set of most likely tokens whose probabilities add up to p; in (0, 1].
    pub top_p: Option<f32>,
    /// The same seed draws the same tokens, natively, in wasm and on any number of threads.
    pub seed: u64,
}

/// The most likely id, the lowest on a tie (torch's argmax).
pub(super) fn greedy(logits: ArrayView1<f32>) -> u32 {
    let mut best = (0, f32::NEG_INFINITY);
    for (i, &l) in logits.iter().enumerate() {
        if l > best.1 {
            best = (i, l);
        }
    }
    best.0 as u32
}

/// A draw from `logits` warped as transformers warps them for sampling: ÷ temperature; only
/// the top k (every token tied with the k-th kept); only the smallest set of the most likely
/// whose probabilities reach top-p (at least one); then the softmax of what is left.
pub(super) fn sample(logits: ArrayView1<f32>, s: &Sampling, rng: &mut SplitMix64) -> u32 {
    let scaled: Array1<f32> = logits.mapv(|l| l / s.temperature);
    let mut order: Vec<usize> = (0..scaled.len()).filter(|&i| scaled[i] > f32::NEG_INFINITY).collect();
    // most likely first; ties to the lower id, so the order never depends on the sort
    order.sort_by(|&a, &b| scaled[b].total_cmp(&scaled[a]).then(a.cmp(&b)));
    if let Some(k) = s.top_k.filter(|&k| k > 0 && k < order.len()) {
        let kth = scaled[order[k - 1]];
        order.retain(|&i| scaled[i] >= kth);
    }
    let kept: Array1<f32> = order.iter().map(|&i| scaled[i]).collect();
    let mut probs = softmax(kept.view());
    if let Some(p) = s.top_p.filter(|&p| p < 1.0) {
        let mut sum = 0.0f64;
        let keep = probs.iter().position(|&q| {
            sum += f64::from(q);
            sum >= f64::from(p)
        });
        let n = keep.map_or(order.len(), |i| i + 1).max(1);
        order.truncate(n);
        let kept: Array1<f32> = order.iter().map(|&i| scaled[i]).collect();
        probs = softmax(kept.view());
    }
    // a uniform number in [0, 1) from the top 53 bits, walked over the probabilities
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut sum = 0.0f64;
    for (&id, &q) in order.iter().zip(&probs) {
        sum += f64::from(q);
        if u < sum {
            return id as u32;
        }
    }
    order.last().copied().unwrap_or(0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_takes_the_first_of_equal_best() {
        assert_eq!(greedy(ndarray::arr1(&[0.0, 2.0, 2.0, -1.0]).view()), 1);
    }

    #[test]
    fn top_k_of_one_and_a_tiny_top_p_are_greedy() {
        let logits = ndarray::arr1(&[0.1, 3.0, 2.9, -1.0]);
        let mut rng = SplitMix64::new(7);
        for s in [
            Sampling { temperature: 1.0, top_k: Some(1), top_p: None, seed: 7 },
            Sampling { temperature: 1.0, top_k: None, top_p: Some(1e-6), seed: 7 },
        ] {
            for _ in 0..50 {
                assert_eq!(sample(logits.view(), &s, &mut rng), 1);
            }
        }
    }

    #[test]
    fn draws_follow_the_softmax() {
        // χ² over 20,000 draws of a four-token distribution: p > 0.01 at 3 degrees of freedom
        // means χ² < 11.34
        let logits = ndarray::arr1(&[0.0f32, 1.0, 2.0, -0.5]);
        let probs = softmax(logits.view());
        let s = Sampling { temperature: 1.0, top_k: None, top_p: None, seed: 42 };
        let mut rng = SplitMix64::new(s.seed);
        let n = 20_000;
        let mut counts = [0usize; 4];
        for _ in 0..n {
            counts[sample(logits.view(), &s, &mut rng) as usize] += 1;
        }
        let chi2: f64 = counts
            .iter()
            .zip(probs.iter())
            .map(|(&c, &p)| {
                let e = n as f64 * f64::from(p);
                (c as f64 - e).powi(2) / e
            })
            .sum();
        assert!(chi2 < 11.34, "χ² = {chi2}, counts {counts:?}, probabilities {probs:?}");
    }

    #[test]
    fn top_p_keeps_the_smallest_set_that_reaches_it() {
        // probabilities ≈ 0.64, 0.24, 0.09, 0.03: top-p 0.8 keeps the first two
        let logits = ndarray::arr1(&[3.0f32, 2.0, 1.0, 0.0]);
        let s = Sampling { temperature: 1.0, top_k: None, top_p: Some(0.8), seed: 1 };
        let mut rng = SplitMix64::new(1);
        let seen: std::collections::BTreeSet<u32> = (0..2000).map(|_| sample(logits.view(), &s, &mut rng)).collect();
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![0, 1]);
    }
}
