//! Where tokens are, inside attention. The paper adds positions to the embeddings before the
//! first layer and attention itself knows none; real models add one of two schemes on the
//! block: rotary embeddings turn Q and K by their positions (Llama, Qwen2, Mistral, GPT-NeoX,
//! `rotary`), or T5's relative position bias is added to the scores (`relative`).
//!
//! Only real models say where tokens are inside attention: the toy-only build has only
//! [`PositionScheme::None`] (the other two are 7 KB of a widget's 150 KB gzipped budget).

use ndarray::Array2;

use crate::error::Result;
// what the two schemes need, all in the `hf` build only
#[cfg(feature = "hf")]
use {
    super::relative::RelativePositionBias,
    super::rotary::{Rotary, RotaryTables},
    ndarray::s,
    std::sync::Arc,
};

/// How an attention block says where tokens are: one scheme per block.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum PositionScheme {
    /// Nothing inside attention (positions, if any, were added to the embeddings).
    #[default]
    None,
    /// Turns Q and K by their positions.
    #[cfg(feature = "hf")]
    Rotary(Rotary),
    /// Added to the scores, shared by the blocks of a stack.
    #[cfg(feature = "hf")]
    RelativeBias(Arc<RelativePositionBias>),
}

// Without the `hf` feature only `None` exists and the arguments below go unread.
#[cfg_attr(not(feature = "hf"), allow(unused_variables))]
impl PositionScheme {
    /// Whether Q and K are turned before the scores.
    pub fn rotates(&self) -> bool {
        match self {
            #[cfg(feature = "hf")]
            PositionScheme::Rotary(_) => true,
            _ => false,
        }
    }

    /// T5's bucket of each (query, key) distance, (Tq, Tk), when the scheme adds a bias; the
    /// queries at positions `first..` (0 but for a step over a KV cache), the keys at 0...
    pub(crate) fn buckets(&self, first: usize, tq: usize, tk: usize) -> Option<Array2<usize>> {
        match self {
            #[cfg(feature = "hf")]
            PositionScheme::RelativeBias(bias) => Some(bias.buckets(first, tq, tk)),
            _ => None,
        }
    }

    /// Head `h`'s bias on its scores, (Tq, Tk), from the `buckets` of [`Self::buckets`].
    pub(crate) fn head_bias(&self, h: usize, buckets: Option<&Array2<usize>>) -> Option<Array2<f32>> {
        match self {
            #[cfg(feature = "hf")]
            PositionScheme::RelativeBias(bias) => Some(bias.head(h, buckets?.view())), // (Tq, Tk)
            _ => None,
        }
    }

    /// Turns `q` (Tq, ·) and `k` (Tk, ·) by their positions 0.., every head of `head_dim`, if
    /// the scheme rotates.
    pub(crate) fn rotate(&self, q: &mut Array2<f32>, k: &mut Array2<f32>, head_dim: usize) -> Result<()> {
        match self {
            #[cfg(feature = "hf")]
            PositionScheme::Rotary(rotary) => rotate(rotary, q, k, head_dim),
            _ => Ok(()),
        }
    }

    /// Turns new rows `q` and `k` (n, ·), both at positions `first..first + n`, if the scheme
    /// rotates: a decoder's step over its KV cache.
    pub(crate) fn rotate_from(
        &self,
        q: &mut Array2<f32>,
        k: &mut Array2<f32>,
        head_dim: usize,
        first: usize,
    ) -> Result<()> {
        match self {
            #[cfg(feature = "hf")]
            PositionScheme::Rotary(rotary) => {
                let n = q.nrows();
                let tables = rotary.tables(first + n);
                let rows = RotaryTables {
                    cos: tables.cos.slice(s![first.., ..]).to_owned(),
                    sin: tables.sin.slice(s![first.., ..]).to_owned(),
                };
                rotary.rotate(q.view_mut(), head_dim, &rows)?;
                rotary.rotate(k.view_mut(), head_dim, &rows)
            }
            _ => Ok(()),
        }
    }
}

#[cfg(feature = "hf")]
fn rotate(rotary: &Rotary, q: &mut Array2<f32>, k: &mut Array2<f32>, head_dim: usize) -> Result<()> {
    let tables = rotary.tables(q.nrows().max(k.nrows()));
    let rows = |n: usize| RotaryTables {
        cos: tables.cos.slice(s![..n, ..]).to_owned(),
        sin: tables.sin.slice(s![..n, ..]).to_owned(),
    };
    if q.nrows() == k.nrows() {
        rotary.rotate(q.view_mut(), head_dim, &tables)?;
        rotary.rotate(k.view_mut(), head_dim, &tables)
    } else {
        let (q_tables, k_tables) = (rows(q.nrows()), rows(k.nrows()));
        rotary.rotate(q.view_mut(), head_dim, &q_tables)?;
        rotary.rotate(k.view_mut(), head_dim, &k_tables)
    }
}
