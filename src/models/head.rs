//! The output head: the last hidden state (T, D) to a score per vocabulary token (T, V), one
//! type for every family, loaded as each checkpoint has it:
//!
//! ```text
//! logits = [transform(h · scale)] · Wᵀ + b
//!   GPT-2, GPT-Neo, Qwen2/Llama tied     W = the token embeddings
//!   GPT-NeoX, Llama/Qwen2/Mistral        W = embed_out / lm_head
//!   BART, Marian                         W = the shared embeddings (or lm_head), b = final_logits_bias
//!   T5 tied                              scale = d_model^-½, W = shared; v1.1 untied: lm_head, no scale
//!   BERT, RoBERTa/XLM-R, DistilBERT      transform = dense → activation → LayerNorm, then the tied
//!                                        embeddings and the head's own bias
//! ```
//!
//! A probability is the softmax of a position's logits; `predict` turns logits into the top
//! tokens of a position.

use std::sync::Arc;

use ndarray::{Array1, Array2, ArrayView1, ArrayView2};

use crate::error::{ensure_finite, Error, Result};
use crate::nn::{Activation, LayerNorm, Linear};

/// What a non-finite logit is said to be in: a weight too large for f32 after the last
/// attention block overflows in the logits or before them.
const LOGITS: &str = "the output head's logits";

/// A masked LM's transform before the projection: `LayerNorm(act(h W + b))`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Transform {
    pub dense: Linear, // (D, D)
    pub activation: Activation,
    pub norm: LayerNorm,
}

/// A model's output head.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OutputHead {
    /// What the hidden state is multiplied by first (T5's tied head: d_model^-½).
    pub scale: f32,
    pub transform: Option<Transform>,
    /// The projection, (V, D) as checkpoints store it: shared with the token embeddings when
    /// tied.
    pub weight: Arc<Array2<f32>>,
    pub bias: Option<Array1<f32>>, // (V,)
}

impl OutputHead {
    /// A head that is the (tied or own) matrix `weight` (V, D) alone.
    pub fn plain(weight: Arc<Array2<f32>>) -> Self {
        OutputHead { scale: 1.0, transform: None, weight, bias: None }
    }

    /// The logits of every row of `h` (T, D): (T, V).
    pub fn logits(&self, h: ArrayView2<f32>) -> Result<Array2<f32>> {
        let x = self.projected(h)?; // (T, D)
        let logits = crate::par::product_then(x.view(), self.weight.t(), |mut y, columns| {
            if let Some(b) = &self.bias {
                y += &b.slice(ndarray::s![columns]);
            }
        }); // (T, V)
        ensure_finite(LOGITS, logits.view())?;
        Ok(logits)
    }

    /// The logits of the tokens `ids` alone at one position `h` (D,): what activation patching
    /// reads, without the product over the whole vocabulary.
    pub fn logits_of(&self, h: ArrayView1<f32>, ids: &[u32]) -> Result<Vec<f32>> {
        let x = self.projected(h.insert_axis(ndarray::Axis(0)))?; // (1, D)
        let vocab = self.weight.nrows();
        ids.iter()
            .map(|&id| {
                let at = id as usize;
                if at >= vocab {
                    return Err(Error::TokenOutOfVocabulary { id, vocab });
                }
                let bias = self.bias.as_ref().map_or(0.0, |b| b[at]);
                let logit = x.row(0).dot(&self.weight.row(at)) + bias;
                match logit.is_finite() {
                    true => Ok(logit),
                    false => Err(Error::NonFinite { what: LOGITS.into(), index: vec![0, at] }),
                }
            })
            .collect()
    }

    /// `h` (T, D) as the projection reads it: scaled, then through a masked LM's transform.
    fn projected(&self, h: ArrayView2<f32>) -> Result<Array2<f32>> {
        let d = self.weight.ncols();
        if h.ncols() != d {
            return Err(Error::shape("the output head's input", &[h.nrows(), h.ncols()], &[h.nrows(), d]));
        }
        let mut x = h.to_owned(); // (T, D)
        if self.scale != 1.0 {
            x *= self.scale;
        }
        if let Some(t) = &self.transform {
            let y = t.dense.forward_then(x.view(), |y| t.activation.apply(y))?; // (T, D)
            x = t.norm.forward(y.view());
        }
        Ok(x)
    }

    /// The logits of one position (D,): (V,).
    pub fn logits_one(&self, h: ArrayView1<f32>) -> Result<Array1<f32>> {
        let row = h.insert_axis(ndarray::Axis(0));
        Ok(self.logits(row)?.row(0).to_owned())
    }
}

/// A token and its probability, as predictions list them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Candidate {
    pub id: u32,
    pub token: String,
    pub p: f32,
}

/// The softmax of `logits` (V,), in f64 sums so a vocabulary of 250,000 adds up.
pub fn softmax(logits: ArrayView1<f32>) -> Array1<f32> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = logits.iter().map(|&l| ((l - max) as f64).exp()).sum();
    logits.mapv(|l| (((l - max) as f64).exp() / sum) as f32)
}

/// One position's softmax over the vocabulary without the array of it: the largest logit and
/// the denominator (each exp in f32 by [`crate::math::exp_neg`], whose loop vectorises where
/// libm's `expf` is a call per token; the sum in f64), so that a token's
/// probability is one exp away and the most probable tokens are the largest logits.
pub struct Softmax<'a> {
    logits: ArrayView1<'a, f32>,
    max: f32,
    sum: f64,
}

impl<'a> Softmax<'a> {
    pub fn of(logits: ArrayView1<'a, f32>) -> Self {
        let (max, sum) = match logits.as_slice() {
            Some(xs) => {
                let max = crate::math::max(xs);
                (max, crate::math::exp_total(xs, max))
            }
            None => {
                let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                (max, logits.iter().map(|&l| crate::math::exp_neg(l - max) as f64).sum())
            }
        };
        Softmax { logits, max, sum }
    }

    /// The probability of token `id` (0 past the vocabulary).
    pub fn p(&self, id: u32) -> f32 {
        self.logits.get(id as usize).map_or(0.0, |&l| (((l - self.max) as f64).exp() / self.sum) as f32)
    }

    /// The `k` most probable ids with their probabilities, best first; ties to the lower id.
    pub fn top(&self, k: usize) -> Vec<(u32, f32)> {
        top_k(self.logits, k).into_iter().map(|(id, _)| (id, self.p(id))).collect()
    }
}

/// The `k` most probable ids of `probs` (V,), best first; ties go to the lower id.
pub fn top_k(probs: ArrayView1<f32>, k: usize) -> Vec<(u32, f32)> {
    let mut best: Vec<(u32, f32)> = Vec::with_capacity(k + 1);
    for (id, &p) in probs.iter().enumerate() {
        if best.len() == k && best.last().is_some_and(|&(_, worst)| p <= worst) {
            continue;
        }
        let at = best.partition_point(|&(_, q)| q >= p);
        best.insert(at, (id as u32, p));
        best.truncate(k);
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn top_k_is_best_first_and_keeps_the_lower_id_on_ties() {
        let p = array![0.1f32, 0.4, 0.1, 0.4];
        assert_eq!(top_k(p.view(), 3), [(1, 0.4), (3, 0.4), (0, 0.1)]);
        assert_eq!(top_k(p.view(), 10).len(), 4);
        assert!(top_k(p.view(), 0).is_empty());
    }

    #[test]
    fn the_summarised_softmax_equals_the_whole_one() {
        let logits = array![2.0f32, -1.0, 7.5, 7.5, 0.25, -30.0];
        let (whole, summary) = (softmax(logits.view()), Softmax::of(logits.view()));
        for id in 0..logits.len() as u32 {
            assert!((summary.p(id) - whole[id as usize]).abs() < 1e-7, "token {id}");
        }
        assert_eq!(summary.top(3).iter().map(|&(id, _)| id).collect::<Vec<_>>(), [2, 3, 0]);
        assert_eq!(summary.p(6), 0.0, "past the vocabulary");
    }

    #[test]
    fn softmax_sums_to_one_even_for_huge_logits() {
        let p = softmax(array![1000.0f32, 1000.0, -1000.0].view());
        assert!((p.sum() - 1.0).abs() < 1e-6);
        assert_eq!(p[0], 0.5);
    }

    #[test]
    fn a_tied_head_scales_then_projects() {
        let w = Arc::new(array![[1.0f32, 0.0], [0.0, 2.0], [1.0, 1.0]]); // (V 3, D 2)
        let head = OutputHead { scale: 0.5, bias: Some(array![0.0, 0.0, 1.0]), ..OutputHead::plain(w) };
        let logits = head.logits(array![[2.0f32, 4.0]].view()).unwrap();
        assert_eq!(logits, array![[1.0f32, 4.0, 4.0]]);
        assert!(head.logits(array![[1.0f32]].view()).is_err(), "a hidden state of the wrong width");
        assert_eq!(head.logits_of(array![2.0f32, 4.0].view(), &[2, 0]).unwrap(), [4.0, 1.0]);
        assert!(head.logits_of(array![2.0f32, 4.0].view(), &[3]).is_err(), "an id past the vocabulary");
    }
}
