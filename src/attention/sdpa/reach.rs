//! Attention that leaves out the keys a mask hides from a query: under a causal mask the upper
//! triangle of QKᵀ is never computed, and weights · V never reads its zeros. Queries go in
//! blocks, each over the keys the block may see. A score left out is one the mask would turn
//! to −∞, and a weight left out is 0, so every value has the bits the whole products give.

use std::ops::Range;

use ndarray::{s, ArrayView2, ArrayViewMut2};

use crate::attention::mask::Mask;

/// Queries a block of [`reach_blocks`] holds: a multiple of every kernel's tile height, and
/// few enough that a causal mask's upper triangle is left out almost whole.
const REACH_BLOCK: usize = 64;

/// Queries from this many on leave out the keys a mask hides from them ([`Mask::reach`]); fewer
/// compute every score, as they always did.
const REACH_MIN_QUERIES: usize = 2 * REACH_BLOCK;

/// The keys each query of `tq` may see under `mask`, when leaving out the rest pays: what
/// [`weights_into`] and [`values_reaching`] take, once for every head of a layer.
pub(crate) fn reach_of(mask: Option<&Mask>, tq: usize, tk: usize) -> Option<Vec<usize>> {
    mask.filter(|m| tq >= REACH_MIN_QUERIES && m.shape() == (tq, tk)).and_then(Mask::reach)
}

/// weights · V into `out` (Tq, d_v), each block of queries over the keys it may see (`reach`):
/// a hidden key's weight is 0, so the sums it leaves out add nothing.
pub(crate) fn values_reaching(
    weights: ArrayView2<f32>,
    v: ArrayView2<f32>,
    reach: Option<&[usize]>,
    out: &mut ArrayViewMut2<f32>,
) {
    let Some(reach) = reach else {
        return crate::par::product_into(weights, v, out);
    };
    for (rows, keys) in reach_blocks(reach) {
        let mut block = out.slice_mut(s![rows.clone(), ..]);
        match keys {
            0 => block.fill(0.0),
            _ => crate::par::product_into(weights.slice(s![rows, ..keys]), v.slice(s![..keys, ..]), &mut block),
        }
    }
}

/// The queries of `reach` in blocks, each with the keys its queries may see: (queries, keys).
fn reach_blocks(reach: &[usize]) -> impl Iterator<Item = (Range<usize>, usize)> + '_ {
    (0..reach.len()).step_by(REACH_BLOCK).map(|i| {
        let rows = i..(i + REACH_BLOCK).min(reach.len());
        let keys = reach[rows.clone()].iter().copied().max().unwrap_or(0);
        (rows, keys)
    })
}

/// QKᵀ into `scores` (Tq, Tk) for the keys each block of queries may see (`reach`): a causal
/// mask's upper triangle is never computed. Kᵀ is laid out in rows once, as the product of a
/// whole block would lay it out, so every score has the bits of the whole product's.
pub(super) fn scores_reaching(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    reach: &[usize],
    scores: &mut ArrayViewMut2<f32>,
) {
    let k_t = k.t().as_standard_layout().into_owned(); // (d_k, Tk)
    for (rows, keys) in reach_blocks(reach) {
        let mut block = scores.slice_mut(s![rows.clone(), ..keys]);
        crate::par::product_into(q.slice(s![rows, ..]), k_t.slice(s![.., ..keys]), &mut block);
    }
}

#[cfg(test)]
mod tests {
    use std::mem::MaybeUninit;

    use ndarray::Array2;

    use super::super::{weights_into, ScoreSteps};
    use super::*;

    /// Irregular values, so that a sum in another order or over other keys shows in the bits.
    fn filled(rows: usize, cols: usize, seed: usize) -> Array2<f32> {
        Array2::from_shape_fn((rows, cols), |(i, j)| (((i * 37 + j * 11 + seed * 7) % 23) as f32 - 11.0).sin() * 0.9)
    }

    /// Leaving out what a mask hides changes no weight and no output, bit for bit: causal, causal
    /// with padding, a sliding window with it, and rows that see nothing spread over a fallback.
    #[test]
    fn what_a_mask_hides_is_left_out_with_the_bits_kept() {
        let t = 203; // past REACH_MIN_QUERIES, not a multiple of a block
        let (q, k, v) = (filled(t, 32, 1), filled(t, 32, 2), filled(t, 24, 3));
        let valid: Vec<bool> = (0..t).map(|j| j % 17 != 5).collect();
        let padded = Mask::causal(t).and(&Mask::key_padding(t, &valid)).unwrap();
        let windowed = padded.and(&Mask::window(t, t, 40)).unwrap();
        let mut blind = Mask::causal(t).allowed().to_owned();
        blind.row_mut(150).fill(false);
        let fallback = Array2::from_shape_fn((t, t), |(_, j)| j < 9);
        let blind = Mask::from_allowed(blind).with_fallback(fallback).unwrap();
        for (name, mask) in [("causal", Mask::causal(t)), ("padded", padded), ("windowed", windowed), ("blind", blind)]
        {
            let reach = reach_of(Some(&mask), t, t).unwrap_or_else(|| panic!("{name}: nothing left out"));
            let steps = ScoreSteps { divisor: 32f32.sqrt(), bias: None };
            let weights = |reach: Option<&[usize]>| {
                let mut out = vec![MaybeUninit::new(f32::NAN); t * t];
                weights_into(q.view(), k.view(), Some(&mask), steps, &mut Vec::new(), &mut out, reach)
                    .unwrap()
                    .1
                    .to_vec()
            };
            let (whole, left) = (weights(None), weights(Some(&reach)));
            let bits = |w: &[f32]| w.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert!(bits(&whole) == bits(&left), "{name}: the weights differ");
            let w = Array2::from_shape_vec((t, t), whole).unwrap();
            let (mut all, mut some) = (Array2::zeros((t, 24)), Array2::zeros((t, 24)));
            values_reaching(w.view(), v.view(), None, &mut all.view_mut());
            values_reaching(w.view(), v.view(), Some(&reach), &mut some.view_mut());
            assert!(bits(all.as_slice().unwrap()) == bits(some.as_slice().unwrap()), "{name}: the outputs differ");
        }
        assert!(reach_of(Some(&Mask::key_padding(t, &valid)), t, t).is_none(), "padding hides too little");
        assert!(reach_of(Some(&Mask::causal(100)), 100, 100).is_none(), "too few queries");
    }
}
