//! Queries and keys in one picture (AttentionViz, Yeh et al., 2023): every token's query and
//! key vector of a head, over many sentences, in one joint embedding ([`joint`]) projected to
//! two dimensions ([`pca`]), so that a positional head draws a curve ordered by position and
//! a token-type head draws clusters.
//!
//! The vectors are the ones the scores are made of: after RoPE in a rotary model, each query
//! head with its shared key head in a grouped-query model, before the division (÷√d_k, none
//! in T5) and T5's position bias.

use std::ops::Range;

use ndarray::{s, Array2, ArrayView2, Axis};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::run::RowAttention;
use moments::{Axes, Moments};

pub mod joint;
pub mod moments;
pub mod pca;
pub mod tsne;

/// The most sentences and tokens (on either side) a corpus takes.
pub const MAX_SENTENCES: usize = 200;
pub const MAX_TOKENS: usize = 4000;

/// One head's query and key vectors in one sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadVectors {
    pub queries: Array2<f32>, // (Tq, d_k)
    pub keys: Array2<f32>,    // (Tk, d_k)
    /// What QKᵀ is divided by before the mask (√d_k mostly; 1 in T5 and GPT-Neo).
    pub divisor: f32,
}

impl HeadVectors {
    /// QKᵀ / divisor, (Tq, Tk): the run's scaled scores (before T5's bias).
    pub fn scores(&self) -> Array2<f32> {
        self.queries.dot(&self.keys.t()) / self.divisor
    }
}

/// Every head's vectors in `layer` of `row`, head by head.
pub fn layer_vectors(row: &RowAttention, layer: usize) -> Result<Vec<HeadVectors>> {
    let (q, k, divisor) = row.queries_keys(layer)?;
    Ok((0..q.len_of(Axis(0)))
        .map(|h| HeadVectors {
            queries: q.index_axis(Axis(0), h).to_owned(),
            keys: k.index_axis(Axis(0), h).to_owned(),
            divisor,
        })
        .collect())
}

/// Where one sentence's tokens are in a corpus's rows, and which of its pairs the mask lets
/// through.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sentence {
    /// Rows of the corpus's queries; positions in the sentence are `query_positions`.
    pub queries: Range<usize>,
    pub keys: Range<usize>,
    pub query_positions: Vec<usize>,
    pub key_positions: Vec<usize>,
    #[serde(skip)]
    allowed: Vec<(usize, usize)>,
}

/// The query and key vectors of every head of one layer over many sentences (PAD left out).
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    /// Per head, (Nq, d_k) and (Nk, d_k), grown sentence by sentence.
    queries: Vec<Vec<f32>>,
    keys: Vec<Vec<f32>>,
    d_k: usize,
    pub sentences: Vec<Sentence>,
    /// The most sentences and tokens it takes; default MAX_SENTENCES and MAX_TOKENS.
    limits: Option<(usize, usize)>,
}

/// One head's picture of a corpus.
#[derive(Debug, Clone, PartialEq)]
pub struct Picture {
    /// (Nq + Nk, 2): the queries' points, then the keys'.
    pub coords: Array2<f32>,
    /// The norm of every point's vector after the joint embedding, in the same order.
    pub norms: Vec<f32>,
    /// The variance share of the two axes.
    pub explained: Vec<f32>,
    /// Pearson's r of the model's q·k against −‖q − k‖ over the pairs the mask lets through,
    /// the distance between the raw vectors and between the joint embedding's.
    pub correlation: [Option<f32>; 2],
    pub scale: f32,
}

impl Corpus {
    pub fn new() -> Self {
        Self::default()
    }

    /// A corpus that takes up to `sentences` sentences and `tokens` tokens a side: the points
    /// of a larger corpus kept to be drawn on axes of the whole ([`Corpus::picture_on`]).
    pub fn with_limits(sentences: usize, tokens: usize) -> Self {
        Corpus { limits: Some((sentences, tokens)), ..Self::default() }
    }

    pub fn heads(&self) -> usize {
        self.queries.len()
    }

    pub fn d_k(&self) -> usize {
        self.d_k
    }

    /// Rows of queries and keys over every sentence.
    pub fn size(&self) -> (usize, usize) {
        self.sentences.last().map_or((0, 0), |s| (s.queries.end, s.keys.end))
    }

    /// Adds the valid tokens of `row` in `layer`; refuses a sentence past the limits, keeping
    /// what it has.
    pub fn add(&mut self, row: &RowAttention, layer: usize) -> Result<()> {
        let query_positions: Vec<usize> = (0..row.query_valid.len()).filter(|&i| row.query_valid[i]).collect();
        let key_positions: Vec<usize> = (0..row.key_valid.len()).filter(|&j| row.key_valid[j]).collect();
        let (nq, nk) = self.size();
        let (sentences, tokens) =
            (self.sentences.len() + 1, (nq + query_positions.len()).max(nk + key_positions.len()));
        let (max_sentences, max_tokens) = self.limits.unwrap_or((MAX_SENTENCES, MAX_TOKENS));
        if sentences > max_sentences || tokens > max_tokens {
            return Err(Error::CorpusTooLarge { sentences, tokens, max_sentences, max_tokens });
        }
        let heads = layer_vectors(row, layer)?;
        let d_k = heads.first().map_or(0, |h| h.queries.ncols());
        if self.sentences.is_empty() {
            self.queries = vec![Vec::new(); heads.len()];
            self.keys = vec![Vec::new(); heads.len()];
            self.d_k = d_k;
        } else if heads.len() != self.heads() || d_k != self.d_k {
            return Err(Error::shape("a sentence's heads", &[heads.len(), d_k], &[self.heads(), self.d_k]));
        }
        for (h, v) in heads.iter().enumerate() {
            self.queries[h].extend(query_positions.iter().flat_map(|&i| v.queries.row(i).to_vec()));
            self.keys[h].extend(key_positions.iter().flat_map(|&j| v.keys.row(j).to_vec()));
        }
        let mask = row.mask(layer)?;
        let mut allowed = Vec::new();
        for (a, &i) in query_positions.iter().enumerate() {
            for (b, &j) in key_positions.iter().enumerate() {
                if mask.allows(i, j) {
                    allowed.push((nq + a, nk + b));
                }
            }
        }
        self.sentences.push(Sentence {
            queries: nq..nq + query_positions.len(),
            keys: nk..nk + key_positions.len(),
            query_positions,
            key_positions,
            allowed,
        });
        Ok(())
    }

    /// Head `head`'s raw queries (Nq, d_k) and keys (Nk, d_k).
    pub fn vectors(&self, head: usize) -> Result<(ArrayView2<'_, f32>, ArrayView2<'_, f32>)> {
        if self.sentences.is_empty() {
            return Err(Error::EmptyCorpus);
        }
        Error::check_index("head", head, self.heads())?;
        let (nq, nk) = self.size();
        let q = ArrayView2::from_shape((nq, self.d_k), &self.queries[head][..]).expect("rows of d_k");
        let k = ArrayView2::from_shape((nk, self.d_k), &self.keys[head][..]).expect("rows of d_k");
        Ok((q, k))
    }

    /// Every (query row, key row) pair the mask lets through, sentence by sentence.
    pub fn pairs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.sentences.iter().flat_map(|s| s.allowed.iter().copied())
    }

    /// Head `head`'s joint embedding placed by t-SNE, started from its PCA picture:
    /// (Nq + Nk, 2), queries first; `progress(epoch)` after each step.
    pub fn tsne(&self, head: usize, epochs: usize, progress: impl tsne::Progress) -> Result<Array2<f32>> {
        let (q, k) = self.vectors(head)?;
        let axes = self.moments(head)?.axes()?;
        let points = stacked(&joint::apply(q, k, axes.shift.clone(), axes.scale));
        let start = axes.place(points.view());
        tsne::tsne(points.view(), start.view(), epochs, progress)
    }

    /// Head `head`'s joint embedding projected on its two principal components.
    pub fn picture(&self, head: usize) -> Result<Picture> {
        self.picture_on(head, &self.moments(head)?.axes()?)
    }

    /// The moments of head `head`'s vectors: what its axes are made of.
    pub fn moments(&self, head: usize) -> Result<Moments> {
        let (q, k) = self.vectors(head)?;
        Moments::of(q, k)
    }

    /// Head `head`'s points placed on `axes`: its own ([`Corpus::picture`]), or those of a
    /// larger corpus these sentences were drawn from. The correlations are over these
    /// sentences' pairs.
    pub fn picture_on(&self, head: usize, axes: &Axes) -> Result<Picture> {
        let (q, k) = self.vectors(head)?;
        if axes.shift.len() != self.d_k {
            return Err(Error::shape("the axes", &[axes.shift.len()], &[self.d_k]));
        }
        let joint = joint::apply(q, k, axes.shift.clone(), axes.scale);
        let pairs: Vec<_> = self.pairs().collect();
        let correlation = [
            joint::correlation([q, k], [q, k], &pairs),
            joint::correlation([q, k], [joint.queries.view(), joint.keys.view()], &pairs),
        ];
        let points = stacked(&joint);
        let norms = points.rows().into_iter().map(|r| r.dot(&r).sqrt()).collect();
        let coords = axes.place(points.view());
        Ok(Picture { coords, norms, explained: axes.explained.clone(), correlation, scale: axes.scale })
    }
}

/// A joint embedding's points in one array: queries, then keys, (Nq + Nk, d_k).
fn stacked(joint: &joint::Joint) -> Array2<f32> {
    let (nq, d) = joint.queries.dim();
    let mut points = Array2::zeros((nq + joint.keys.nrows(), d));
    points.slice_mut(s![..nq, ..]).assign(&joint.queries);
    points.slice_mut(s![nq.., ..]).assign(&joint.keys);
    points
}
