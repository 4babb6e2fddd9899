//! Scaled dot-product attention, §3.2.1 of "Attention Is All You Need":
//! `Attention(Q, K, V) = softmax(QKᵀ / √d_k) V`, with a mask applied before the softmax.
//!
//! Symbols: Tq queries, Tk keys, d_k the width of a query and a key, d_v the width of a value.

use std::mem::MaybeUninit;

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut1, Zip};

use super::mask::Mask;
use crate::error::{ensure_finite, Error, Result};
use crate::math;
use reach::scores_reaching;
pub(crate) use reach::{reach_of, values_reaching};

mod reach;

/// What attention returns: the weights with the output.
#[derive(Debug, Clone, PartialEq)]
pub struct Attention {
    pub weights: Array2<f32>, // (Tq, Tk), each visible row sums to 1
    pub output: Array2<f32>,  // (Tq, d_v)
    /// Queries that could see no key: their weights and output are zero.
    pub fully_masked_rows: Vec<usize>,
}

/// Every intermediate matrix of one attention call, for showing the steps one by one.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub scores: Array2<f32>, // (Tq, Tk) QKᵀ
    pub scaled: Array2<f32>, // (Tq, Tk) QKᵀ / scale
    /// A position bias added to the scaled scores (T5's relative positions), (Tq, Tk).
    pub position_bias: Option<Array2<f32>>,
    /// `scaled + position_bias`, (Tq, Tk), when there is a bias.
    pub biased: Option<Array2<f32>>,
    pub masked: Array2<f32>,  // (Tq, Tk) scaled (and biased), with -∞ where the mask hides a key
    pub weights: Array2<f32>, // (Tq, Tk) softmax of masked
    pub output: Array2<f32>,  // (Tq, d_v) weights · V
    /// What the scores were divided by: √d_k, 1 with scaling off or in a model that does not
    /// scale (T5, GPT-Neo), √d_k · (layer + 1) in GPT-2's inverse-layer variant. (The divisor;
    /// named `scale` for the page, which reads it under that name.)
    pub scale: f32,
    pub fully_masked_rows: Vec<usize>,
}

/// How a model scales its scores before the mask.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScoreScale {
    /// ÷√d_k, the paper's.
    SqrtDk,
    /// Not at all: T5 (its initialisation folds the scale into W_Q) and GPT-Neo.
    None,
    /// ÷ this number: GPT-2 with `scale_attn_by_inverse_layer_idx` divides by √d_k · (layer + 1).
    Divisor(f32),
}

impl ScoreScale {
    /// What scores of width `d_k` are divided by; `scale_scores` false (a what-if) divides by 1.
    pub fn divisor(self, d_k: usize, scale_scores: bool) -> f32 {
        match self {
            _ if !scale_scores => 1.0,
            ScoreScale::SqrtDk => (d_k as f32).sqrt(),
            ScoreScale::None => 1.0,
            ScoreScale::Divisor(d) => d,
        }
    }
}

/// What happens to QKᵀ between the product and the mask.
#[derive(Debug, Clone, Copy)]
pub struct ScoreSteps<'a> {
    /// What the scores are divided by (1: not at all).
    pub divisor: f32,
    /// Added after scaling and before the mask: a position bias, (Tq, Tk).
    pub bias: Option<ArrayView2<'a, f32>>,
}

/// Attention of `q` (Tq, d_k) over `k` (Tk, d_k) and `v` (Tk, d_v).
///
/// With `scale_scores` false the scores are not divided by √d_k: the softmax then saturates as d_k
/// grows, which is why the paper scales.
pub fn scaled_dot_product_attention(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    mask: Option<&Mask>,
    scale_scores: bool,
) -> Result<Attention> {
    let steps = ScoreSteps { divisor: ScoreScale::SqrtDk.divisor(q.ncols(), scale_scores), bias: None };
    attention(q, k, v, mask, steps)
}

/// Attention with the score steps a model takes: its scale and a position bias, if any.
pub fn attention(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    mask: Option<&Mask>,
    steps: ScoreSteps,
) -> Result<Attention> {
    check_inputs(q, k, Some(v), mask, steps.bias)?;
    let (weights, fully_masked_rows) = weights_checked(q, k, mask, steps)?; // (Tq, Tk)
    let output = crate::par::product_here(weights.view(), v); // (Tq, d_v), the block's kernel
    Ok(Attention { weights, output, fully_masked_rows })
}

/// The weights alone, (Tq, Tk): what a view draws, without the values.
pub fn attention_weights(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    mask: Option<&Mask>,
    steps: ScoreSteps,
) -> Result<Array2<f32>> {
    check_inputs(q, k, None, mask, steps.bias)?;
    Ok(weights_checked(q, k, mask, steps)?.0)
}

fn weights_checked(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    mask: Option<&Mask>,
    steps: ScoreSteps,
) -> Result<(Array2<f32>, Vec<usize>)> {
    let (tq, tk) = (q.nrows(), k.nrows());
    let reach = reach_of(mask, tq, tk);
    let mut weights = Vec::with_capacity(tq * tk);
    let (head, _) = weights_into(
        q,
        k,
        mask,
        steps,
        &mut Vec::new(),
        &mut weights.spare_capacity_mut()[..tq * tk],
        reach.as_deref(),
    )?;
    // SAFETY: `weights_into` wrote every one of the tq · tk values
    unsafe { weights.set_len(tq * tk) };
    Ok((matrix("weights", tq, tk, weights)?, head.fully_masked_rows))
}

/// What [`weights_into`] says about the head it computed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HeadWeights {
    /// Queries that could see no key.
    pub fully_masked_rows: Vec<usize>,
    /// The head's largest weight.
    pub max: f32,
}

/// Writes the weights of queries `q` (Tq, d_k) over keys `k` (Tk, d_k) into `out`, (Tq, Tk)
/// row-major, with `scratch` holding QKᵀ: then each row goes through 1. scale, 2. the position
/// bias, 3. the mask and 4. softmax while it is in cache. With `reach` ([`reach_of`] for this
/// mask) only the scores of keys a query may see are computed.
///
/// The caller has checked the shapes and that Q, K and the bias are finite; a score that
/// overflows is an error here. `out` need not have been written before: a head's weights are
/// a large buffer, and zeroing it first took 4 % of MiniLM's forward at 512 tokens. Every
/// value is written before it is read, and on success `out` comes back as the weights.
pub(crate) fn weights_into<'o>(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    mask: Option<&Mask>,
    steps: ScoreSteps,
    scratch: &mut Vec<f32>,
    out: &'o mut [MaybeUninit<f32>],
    reach: Option<&[usize]>,
) -> Result<(HeadWeights, &'o mut [f32])> {
    let (tq, tk) = (q.nrows(), k.nrows());
    if out.len() != tq * tk {
        return Err(Error::shape("weights", &[out.len()], &[tq * tk]));
    }
    scratch.resize(tq * tk, 0.0);
    let mut scores = matrix("scores QKᵀ", tq, tk, std::mem::take(scratch))?; // (Tq, Tk)
    match reach {
        Some(reach) => scores_reaching(q, k, reach, &mut scores.view_mut()),
        None => crate::par::product_into(q, k.t(), &mut scores.view_mut()), // QKᵀ, as the trace makes it
    }
    *scratch = scores.into_raw_vec_and_offset().0;
    let inv = 1.0 / steps.divisor;
    let mut head = HeadWeights { fully_masked_rows: Vec::new(), max: 0.0 };
    for (i, (s, row)) in scratch.chunks_exact(tk).zip(out.chunks_exact_mut(tk)).enumerate() {
        // past a query's reach the scores were not computed: the mask hides those keys
        let s = &s[..reach.map_or(tk, |r| r[i])];
        // 1. scale (×1 where nothing scales: the same bits), with the check and the largest
        // score in the same pass; 2. add the position bias, 3. mask: the trace's arithmetic,
        // value for value
        let (finite, max) = math::scale_into(&mut row[..s.len()], s, inv);
        if !finite {
            let j = s.iter().position(|x| !x.is_finite()).unwrap_or(0);
            return Err(Error::NonFinite { what: "scores QKᵀ".to_string(), index: vec![i, j] });
        }
        // past its reach the mask hides every key
        row[s.len()..].fill(MaybeUninit::new(f32::NEG_INFINITY));
        // SAFETY: every value of the row was written just above
        let row = unsafe { &mut *(row as *mut [MaybeUninit<f32>] as *mut [f32]) };
        let hidden = mask.filter(|m| !m.sees_all(i));
        if let Some(bias) = steps.bias {
            Zip::from(ArrayViewMut1::from(&mut *row)).and(bias.row(i)).for_each(|x, &b| *x += b);
        }
        if let Some(mask) = hidden {
            Zip::from(ArrayViewMut1::from(&mut *row))
                .and(mask.allowed().row(i))
                .for_each(|x, &a| *x = if a { *x } else { f32::NEG_INFINITY });
        }
        // 4. softmax, from the largest score when steps 2 and 3 left the row as scaled
        let max = (steps.bias.is_none() && hidden.is_none()).then_some(max);
        let end = softmax_row(row, mask.and_then(|m| m.fallback(i)), max);
        head.max = head.max.max(end.max);
        if !end.seen {
            head.fully_masked_rows.push(i);
        }
    }
    // SAFETY: the loop wrote every row of `out`: tq rows of tk, its whole length
    Ok((head, unsafe { &mut *(out as *mut [MaybeUninit<f32>] as *mut [f32]) }))
}

/// `values` as a (rows, cols) matrix, row-major: `what` names it in the error (which a caller
/// that counted its values never sees).
pub(crate) fn matrix(what: &str, rows: usize, cols: usize, values: Vec<f32>) -> Result<Array2<f32>> {
    let n = values.len();
    Array2::from_shape_vec((rows, cols), values).map_err(|_| Error::shape(what, &[n], &[rows * cols]))
}

/// The same computation as [`scaled_dot_product_attention`], keeping every step.
pub fn trace(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    mask: Option<&Mask>,
    scale_scores: bool,
) -> Result<Trace> {
    trace_steps(q, k, v, mask, ScoreSteps { divisor: ScoreScale::SqrtDk.divisor(q.ncols(), scale_scores), bias: None })
}

/// The same computation as [`attention`], keeping every step.
pub fn trace_steps(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    v: ArrayView2<f32>,
    mask: Option<&Mask>,
    steps: ScoreSteps,
) -> Result<Trace> {
    check_inputs(q, k, Some(v), mask, steps.bias)?;
    let scores = scores(q, k)?; // (Tq, Tk)
    let scaled = &scores * (1.0 / steps.divisor); // (Tq, Tk)
    let position_bias = steps.bias.map(|b| b.to_owned()); // (Tq, Tk)
    let biased = position_bias.as_ref().map(|b| &scaled + b); // (Tq, Tk)
    let mut masked = biased.clone().unwrap_or_else(|| scaled.clone());
    apply_mask(&mut masked, mask);
    let mut weights = masked.clone();
    let fully_masked_rows = softmax_masked(&mut weights, mask);
    let output = crate::par::product_here(weights.view(), v); // (Tq, d_v), the block's kernel
    Ok(Trace {
        scores,
        scaled,
        position_bias,
        biased,
        masked,
        weights,
        output,
        scale: steps.divisor,
        fully_masked_rows,
    })
}

/// Row-wise softmax of `masked` (-∞ marks a hidden key). A row with every key hidden gives
/// zeros and its index is returned, so no NaN ever reaches a heatmap.
pub fn softmax_rows(masked: ArrayView2<f32>) -> (Array2<f32>, Vec<usize>) {
    let mut weights = masked.as_standard_layout().into_owned();
    let fully = softmax_masked(&mut weights, None);
    (weights, fully)
}

/// `Σ_j weights[j] · v[j]`: the mixing step on its own, as in seed 000's table
/// (0.7·[10, 0] + 0.1·[0, 10] + 0.2·[5, 5] = [8, 2]).
pub fn weighted_sum(weights: ArrayView1<f32>, v: ArrayView2<f32>) -> Result<Array1<f32>> {
    if weights.len() != v.nrows() {
        return Err(Error::shape("weights", &[weights.len()], &[v.nrows()]));
    }
    Ok(weights.dot(&v)) // (d_v,)
}

/// QKᵀ of checked inputs; fails rather than let an overflow become NaN weights.
fn scores(q: ArrayView2<f32>, k: ArrayView2<f32>) -> Result<Array2<f32>> {
    let scores = crate::par::product_here(q, k.t()); // (Tq, Tk), the fast path's kernel
    ensure_finite("scores QKᵀ", scores.view())?;
    Ok(scores)
}

fn apply_mask(scores: &mut Array2<f32>, mask: Option<&Mask>) {
    if let Some(mask) = mask {
        Zip::from(scores).and(mask.allowed()).for_each(|s, &allowed| {
            if !allowed {
                *s = f32::NEG_INFINITY;
            }
        });
    }
}

/// Softmax of every row of `x` (standard layout), as the fast path does it row by row.
fn softmax_masked(x: &mut Array2<f32>, mask: Option<&Mask>) -> Vec<usize> {
    if !x.is_standard_layout() {
        *x = x.as_standard_layout().into_owned();
    }
    let tk = x.ncols().max(1);
    let rows = x.as_slice_mut().map_or(&mut [][..], |s| s);
    let mut unseen = Vec::new();
    for (i, row) in rows.chunks_exact_mut(tk).enumerate() {
        if !softmax_row(row, mask.and_then(|m| m.fallback(i)), None).seen {
            unseen.push(i);
        }
    }
    unseen
}

/// How one row's softmax ended.
struct RowEnd {
    /// Whether the query saw any key.
    seen: bool,
    /// The row's largest weight.
    max: f32,
}

/// Softmax of one row in place (-∞ marks a hidden key). A row that sees no key spreads evenly
/// over its `fallback` keys if it has any (transformers' arithmetic for such rows), else it is
/// all zeros.
fn softmax_row(row: &mut [f32], fallback: Option<ArrayView1<bool>>, max: Option<f32>) -> RowEnd {
    // 1. the largest visible score (unless the caller has it); subtracting it keeps exp() from
    // overflowing
    let max = max.unwrap_or_else(|| math::max(row));
    if max == f32::NEG_INFINITY {
        let keys = fallback.map_or(0, |f| f.iter().filter(|&&k| k).count());
        let share = if keys > 0 { 1.0 / keys as f32 } else { 0.0 };
        match fallback {
            Some(f) if keys > 0 => {
                Zip::from(ArrayViewMut1::from(row)).and(f).for_each(|w, &k| *w = if k { share } else { 0.0 })
            }
            _ => row.fill(0.0),
        }
        return RowEnd { seen: false, max: share };
    }
    // 2. exponentiate: hidden keys (-∞) become exactly 0, the largest exactly 1
    let sum = math::exp_sum(row, max);
    // 3. normalise, guarding the zero sum
    let inv = if sum > 0.0 { 1.0 / sum } else { 0.0 };
    row.iter_mut().for_each(|e| *e *= inv);
    RowEnd { seen: true, max: inv }
}

fn check_inputs(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    v: Option<ArrayView2<f32>>,
    mask: Option<&Mask>,
    bias: Option<ArrayView2<f32>>,
) -> Result<()> {
    check_shapes(q, k, v, mask, bias)?;
    ensure_finite("Q", q)?;
    ensure_finite("K", k)?;
    if let Some(v) = v {
        ensure_finite("V", v)?;
    }
    if let Some(bias) = bias {
        ensure_finite("position bias", bias)?;
    }
    Ok(())
}

/// Q, K, V, the mask and the bias agree on Tq, Tk and d_k, and none is empty.
pub(crate) fn check_shapes(
    q: ArrayView2<f32>,
    k: ArrayView2<f32>,
    v: Option<ArrayView2<f32>>,
    mask: Option<&Mask>,
    bias: Option<ArrayView2<f32>>,
) -> Result<()> {
    let (tq, d_k) = q.dim();
    // the values say how many keys there are; K must match them and Q
    let (tk, d_v) = v.map_or((k.nrows(), 1), |v| v.dim());
    if k.dim() != (tk, d_k) {
        return Err(Error::shape("K", &[k.nrows(), k.ncols()], &[tk, d_k]));
    }
    for (what, shape) in [("mask", mask.map(Mask::shape)), ("position bias", bias.map(|b| b.dim()))] {
        if let Some((mq, mk)) = shape {
            if (mq, mk) != (tq, tk) {
                return Err(Error::shape(what, &[mq, mk], &[tq, tk]));
            }
        }
    }
    if tq == 0 || tk == 0 || d_k == 0 || d_v == 0 {
        return Err(Error::shape("Q, K, V", &[tq, tk, d_k, d_v], &[1, 1, 1, 1]));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
