//! One sequence through the model and back: the loss of predicting each next token, and the
//! gradient of every weight, written out by hand for GPT-2's attention-only blocks.
//!
//! ```text
//! forward                                   backward (d· is ∂loss/∂·)
//! x  = wte[ids] + wpe[0..T]                 dwte[ids] += dx, dwpe += dx
//! per block:                                per block, last first:
//!   h   = LN(x; g₁, b₁)                       dx  += LN'(dh)
//!   qkv = h·W_a + b_a        (T, 3D)          dW_a += hᵀ·dqkv, dh = dqkv·W_aᵀ
//!   p   = softmax(q_h·k_hᵀ/√d_k + causal)     ds = p ⊙ (dp − Σ_j dp⊙p) / √d_k, dq = ds·k, dk = dsᵀ·q
//!   o_h = p·v_h                               dp = do_h·v_hᵀ, dv = pᵀ·do_h
//!   x  += o·W_p + b_p                         dW_p += oᵀ·dx, do = dx·W_pᵀ
//! y = LN(x; g_f, b_f)·Wᵀ     (T, V)         dy = (softmax(y) − onehot) / N, dW += dyᵀ·LN(…)
//!   (W: lm_head, or wte when tied)
//! loss = Σ_t −log softmax(y_t)[ids_{t+1}] / N
//! ```
//!
//! N is the number of predictions in the whole batch, so the sequences' gradients add up to
//! the batch mean's. The arithmetic is plain ndarray, the same on any machine and thread.

use ndarray::{s, Array1, Array2, Array3, ArrayView1, ArrayView2, ArrayViewMut1, Axis};

use super::params::{Layout, Slot};

/// GPT-2's `layer_norm_epsilon`.
const LN_EPS: f32 = 1e-5;

/// What one sequence gives: its summed loss, how many next tokens it predicted right (argmax),
/// and the gradient of every weight (in the layout's flat order).
pub struct SequenceGrad {
    pub loss: f64,
    pub correct: Vec<bool>,
    pub grad: Vec<f32>,
}

/// A layer norm's saved values: the normalised rows and each row's 1/σ.
struct NormCache {
    xhat: Array2<f32>, // (T, D)
    rstd: Array1<f32>, // (T,)
}

struct BlockCache {
    norm: NormCache,
    h: Array2<f32>,     // (T, D)
    qkv: Array2<f32>,   // (T, 3D)
    probs: Array3<f32>, // (H, T, T)
    o: Array2<f32>,     // (T, D), heads concatenated
}

/// `x` normalised per row, then scaled by `g` and shifted by `b`.
fn layer_norm(x: ArrayView2<f32>, g: ArrayView1<f32>, b: ArrayView1<f32>) -> (Array2<f32>, NormCache) {
    let d = x.ncols() as f32;
    let mut xhat = x.to_owned();
    let mut rstd = Array1::zeros(x.nrows());
    for (mut row, r) in xhat.rows_mut().into_iter().zip(rstd.iter_mut()) {
        let mean = row.sum() / d;
        row -= mean;
        let var = row.iter().map(|v| v * v).sum::<f32>() / d;
        *r = 1.0 / (var + LN_EPS).sqrt();
        row *= *r;
    }
    let y = &xhat * &g + b;
    (y, NormCache { xhat, rstd })
}

/// The layer norm's backward: adds to `dg`, `db` and gives dx (T, D).
fn layer_norm_back(
    dy: ArrayView2<f32>,
    cache: &NormCache,
    g: ArrayView1<f32>,
    mut dg: ArrayViewMut1<f32>,
    mut db: ArrayViewMut1<f32>,
) -> Array2<f32> {
    dg += &(&dy * &cache.xhat).sum_axis(Axis(0));
    db += &dy.sum_axis(Axis(0));
    let d = dy.ncols() as f32;
    let mut dx = &dy * &g; // dxhat
    for ((mut row, xhat), &r) in dx.rows_mut().into_iter().zip(cache.xhat.rows()).zip(&cache.rstd) {
        let mean = row.sum() / d;
        let mean_x = row.iter().zip(xhat).map(|(a, b)| a * b).sum::<f32>() / d;
        row.zip_mut_with(&xhat, |v, &xh| *v = r * (*v - mean - xh * mean_x));
    }
    dx
}

/// Every layer's attention weights (H, T, T) on `ids`: what the trainer's model computes,
/// for checking that the files it writes make the same model.
pub fn attention(layout: &Layout, weights: &[f32], ids: &[u32]) -> Vec<Array3<f32>> {
    forward(layout, weights, ids).1.into_iter().map(|c| c.probs).collect()
}

/// The residual stream after the last block (T, D), and what each block keeps for the backward.
fn forward(layout: &Layout, weights: &[f32], ids: &[u32]) -> (Array2<f32>, Vec<BlockCache>) {
    let cfg = layout.config;
    let (t, d, heads, d_k) = (ids.len(), cfg.n_embd, cfg.n_head, cfg.d_k());
    let scale = 1.0 / (d_k as f32).sqrt();
    let (wte, wpe) = (layout.wte.matrix(weights), layout.wpe.matrix(weights));

    // 1. embeddings
    let mut x = Array2::<f32>::zeros((t, d));
    for (i, &id) in ids.iter().enumerate() {
        x.row_mut(i).assign(&(&wte.row(id as usize) + &wpe.row(i)));
    }

    // 2. the blocks, keeping what the backward pass reads
    let mut caches = Vec::with_capacity(layout.blocks.len());
    for b in &layout.blocks {
        let (h, norm) = layer_norm(x.view(), b.ln_1_weight.vector(weights), b.ln_1_bias.vector(weights));
        let qkv = h.dot(&b.c_attn_weight.matrix(weights)) + b.c_attn_bias.vector(weights); // (T, 3D)
        let mut probs = Array3::<f32>::zeros((heads, t, t));
        let mut o = Array2::<f32>::zeros((t, d));
        for hd in 0..heads {
            let cols = |part: usize| s![.., part * d + hd * d_k..part * d + (hd + 1) * d_k];
            let (q, k, v) = (qkv.slice(cols(0)), qkv.slice(cols(1)), qkv.slice(cols(2)));
            let mut p = probs.index_axis_mut(Axis(0), hd);
            p.assign(&(q.dot(&k.t()) * scale)); // (T, T)
            for (i, mut row) in p.rows_mut().into_iter().enumerate() {
                // causal: keys after the query are out; row i always sees key i
                let seen = row.slice(s![..=i]);
                let max = seen.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
                let mut sum = 0.0;
                for (j, w) in row.iter_mut().enumerate() {
                    *w = if j <= i { (*w - max).exp() } else { 0.0 };
                    sum += *w;
                }
                row /= sum;
            }
            o.slice_mut(s![.., hd * d_k..(hd + 1) * d_k]).assign(&p.dot(&v)); // (T, d_k)
        }
        x += &(o.dot(&b.c_proj_weight.matrix(weights)) + b.c_proj_bias.vector(weights));
        caches.push(BlockCache { norm, h, qkv, probs, o });
    }
    (x, caches)
}

/// The loss and gradient of one sequence `ids` (T ≤ n_positions) under `weights`, each
/// prediction weighing 1/`predictions` (the batch's count).
pub fn sequence_grad(layout: &Layout, weights: &[f32], ids: &[u32], predictions: usize) -> SequenceGrad {
    let cfg = layout.config;
    let (t, d, heads, d_k) = (ids.len(), cfg.n_embd, cfg.n_head, cfg.d_k());
    let scale = 1.0 / (d_k as f32).sqrt();
    let (x, caches) = forward(layout, weights, ids);

    // 3. the final norm, the output head, and each position's next-token loss
    let (hf, norm_f) = layer_norm(x.view(), layout.ln_f_weight.vector(weights), layout.ln_f_bias.vector(weights));
    let head = layout.head().matrix(weights); // (V, D)
    let logits = hf.dot(&head.t()); // (T, V)
    let mut dlogits = Array2::<f32>::zeros(logits.raw_dim());
    let (mut loss, mut correct) = (0.0f64, Vec::with_capacity(t.saturating_sub(1)));
    let per = 1.0 / predictions.max(1) as f32;
    for i in 0..t.saturating_sub(1) {
        let (row, target) = (logits.row(i), ids[i + 1] as usize);
        let max = row.fold(f32::NEG_INFINITY, |m, &v| m.max(v));
        let sum: f32 = row.iter().map(|&l| (l - max).exp()).sum();
        loss += (sum.ln() + max - row[target]) as f64;
        let best = row.iter().enumerate().fold(0, |b, (j, &l)| if l > row[b] { j } else { b });
        correct.push(best == target);
        let mut dy = dlogits.row_mut(i);
        dy.assign(&row.mapv(|l| (l - max).exp() / sum * per));
        dy[target] -= per;
    }

    // 4. backward, last first
    let mut grad = vec![0.0f32; layout.len];
    add_matrix(&mut grad, layout.head(), &dlogits.t().dot(&hf)); // (V, D)
    let dhf = dlogits.dot(&head); // (T, D)
    let (dg, db) = two_vectors(&mut grad, layout.ln_f_weight, layout.ln_f_bias);
    let mut dx = layer_norm_back(dhf.view(), &norm_f, layout.ln_f_weight.vector(weights), dg, db);
    for (b, cache) in layout.blocks.iter().zip(&caches).rev() {
        // x += o·W_p + b_p
        add_matrix(&mut grad, b.c_proj_weight, &cache.o.t().dot(&dx));
        add_matrix(&mut grad, b.c_proj_bias, &dx.sum_axis(Axis(0)).insert_axis(Axis(0)));
        let d_o = dx.dot(&b.c_proj_weight.matrix(weights).t()); // (T, D)
        let mut dqkv = Array2::<f32>::zeros((t, 3 * d));
        for hd in 0..heads {
            let cols = |part: usize| s![.., part * d + hd * d_k..part * d + (hd + 1) * d_k];
            let (q, k, v) = (cache.qkv.slice(cols(0)), cache.qkv.slice(cols(1)), cache.qkv.slice(cols(2)));
            let p = cache.probs.index_axis(Axis(0), hd); // (T, T)
            let d_oh = d_o.slice(s![.., hd * d_k..(hd + 1) * d_k]);
            let dp = d_oh.dot(&v.t()); // (T, T)
            dqkv.slice_mut(cols(2)).assign(&p.t().dot(&d_oh));
            let mut ds = &p * &dp;
            for (mut row, prow) in ds.rows_mut().into_iter().zip(p.rows()) {
                let dot = row.sum(); // Σ_j p·dp
                row.zip_mut_with(&prow, |v, &pj| *v = (*v - pj * dot) * scale);
            }
            dqkv.slice_mut(cols(0)).assign(&ds.dot(&k));
            dqkv.slice_mut(cols(1)).assign(&ds.t().dot(&q));
        }
        add_matrix(&mut grad, b.c_attn_weight, &cache.h.t().dot(&dqkv));
        add_matrix(&mut grad, b.c_attn_bias, &dqkv.sum_axis(Axis(0)).insert_axis(Axis(0)));
        let dh = dqkv.dot(&b.c_attn_weight.matrix(weights).t()); // (T, D)
        let (dg, db) = two_vectors(&mut grad, b.ln_1_weight, b.ln_1_bias);
        dx += &layer_norm_back(dh.view(), &cache.norm, b.ln_1_weight.vector(weights), dg, db);
    }
    for (i, &id) in ids.iter().enumerate() {
        let row = dx.row(i);
        layout.wte.matrix_mut(&mut grad).row_mut(id as usize).scaled_add(1.0, &row);
        layout.wpe.matrix_mut(&mut grad).row_mut(i).scaled_add(1.0, &row);
    }
    SequenceGrad { loss, correct, grad }
}

/// Adds `m` (the slot's shape) to the slot's gradient.
fn add_matrix(grad: &mut [f32], slot: Slot, m: &Array2<f32>) {
    let mut g = slot.matrix_mut(grad);
    g += m;
}

/// Two adjacent vectors of the gradient at once (a norm's weight and bias).
fn two_vectors(grad: &mut [f32], first: Slot, second: Slot) -> (ArrayViewMut1<'_, f32>, ArrayViewMut1<'_, f32>) {
    debug_assert_eq!(first.offset + first.len(), second.offset, "a norm's bias follows its weight");
    let (a, b) = grad[first.offset..second.offset + second.len()].split_at_mut(first.len());
    (ArrayViewMut1::from(a), ArrayViewMut1::from(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::params::TinyConfig;

    /// Every weight's gradient against central differences of the loss in f64-summed f32.
    #[test]
    fn gradients_equal_finite_differences() {
        for tie_word_embeddings in [true, false] {
            let cfg =
                TinyConfig { vocab_size: 11, n_positions: 9, n_embd: 8, n_head: 2, n_layer: 2, tie_word_embeddings };
            check_against_differences(&Layout::new(cfg).unwrap());
        }
    }

    fn check_against_differences(layout: &Layout) {
        let layout = layout.clone();
        let mut weights = layout.init(3);
        // larger weights than GPT-2's start, so every path carries signal
        weights.iter_mut().enumerate().for_each(|(i, w)| *w += 0.3 * ((i * 7919 % 101) as f32 / 101.0 - 0.5));
        let ids = [1u32, 4, 2, 9, 4, 2, 7, 0];
        let n = ids.len() - 1;
        let got = sequence_grad(&layout, &weights, &ids, n);
        let loss = |w: &[f32]| sequence_grad(&layout, w, &ids, n).loss / n as f64;
        let mut worst = 0.0f64;
        for (name, slot, _) in layout.named() {
            for at in (slot.offset..slot.offset + slot.len()).step_by(3) {
                let eps = 1e-2f32;
                let (mut up, mut down) = (weights.clone(), weights.clone());
                up[at] += eps;
                down[at] -= eps;
                let numeric = (loss(&up) - loss(&down)) / (2.0 * eps as f64);
                let analytic = got.grad[at] as f64;
                let err = (numeric - analytic).abs() / numeric.abs().max(analytic.abs()).max(1e-2);
                worst = worst.max(err);
                assert!(err < 2e-2, "{name}[{}]: analytic {analytic}, numeric {numeric}", at - slot.offset);
            }
        }
        eprintln!("worst relative error against central differences: {worst:.1e}");
    }
}
