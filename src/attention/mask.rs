//! Which keys each query may look at.
//!
//! The original paper uses attention in three places, and each has its own mask
//! (seed 000's table):
//!
//! | where                          | Q from             | K·V from             | a query may see            |
//! |--------------------------------|--------------------|----------------------|----------------------------|
//! | encoder self-attention         | the encoder input  | the same input       | the whole source but PAD   |
//! | decoder masked self-attention  | the decoder input  | the same input       | itself and earlier places  |
//! | decoder cross-attention        | the decoder        | the encoder's output | the whole source but PAD   |

use ndarray::{Array2, ArrayView1, ArrayView2};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Which keys a query may see. Each place of the table has its own (see
/// [`Place`](super::place::Place)); `None` masks nothing, for comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", try_from = "String")]
pub enum MaskKind {
    /// Nothing hidden, PAD keys included.
    None,
    /// PAD keys get no weight: encoder self-attention.
    Padding,
    /// A query sees itself and earlier positions, and no PAD key: decoder self-attention.
    Causal,
    /// Decoder queries see every source key but PAD: cross-attention.
    Cross,
}

impl MaskKind {
    pub const ALL: [MaskKind; 4] = [MaskKind::None, MaskKind::Padding, MaskKind::Causal, MaskKind::Cross];

    /// The name used in URLs, requests and messages: "none", "padding", "causal", "cross".
    pub fn name(self) -> &'static str {
        match self {
            MaskKind::None => "none",
            MaskKind::Padding => "padding",
            MaskKind::Causal => "causal",
            MaskKind::Cross => "cross",
        }
    }

    pub fn parse(name: &str) -> Result<Self> {
        MaskKind::ALL
            .into_iter()
            .find(|m| m.name() == name)
            .ok_or_else(|| Error::unknown("mask", name, &MaskKind::ALL.map(MaskKind::name)))
    }

    /// This mask over one batch row: `query_valid` (Tq) and `key_valid` (Tk) are false at PAD.
    pub fn build(self, query_valid: &[bool], key_valid: &[bool]) -> Result<Mask> {
        let (tq, tk) = (query_valid.len(), key_valid.len());
        match self {
            MaskKind::None => Ok(Mask::none(tq, tk)),
            MaskKind::Padding | MaskKind::Cross => Ok(Mask::key_padding(tq, key_valid)),
            MaskKind::Causal if tq != tk => Err(Error::shape("causal mask", &[tq, tk], &[tq, tq])),
            MaskKind::Causal => Mask::causal(tq).and(&Mask::key_padding(tq, key_valid)),
        }
    }
}

/// `allowed[[i, j]]` is true when query `i` may attend to key `j`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mask {
    allowed: Array2<bool>, // (Tq, Tk)
    /// Where a query that may see no key spreads its weight evenly, as transformers' additive
    /// masks make it do (every score becomes the dtype's minimum, and softmax of equal numbers
    /// is uniform); `None`: such a row is all zeros, headmap's own convention.
    fallback: Option<Array2<bool>>, // (Tq, Tk)
    /// Per query, whether it sees every key: softmax then skips the mask's pass over its row.
    open: Vec<bool>, // (Tq,)
}

impl Mask {
    /// Every query sees every key.
    pub fn none(tq: usize, tk: usize) -> Self {
        Mask::of(Array2::from_elem((tq, tk), true))
    }

    /// Query `i` sees keys `0..=i`: the decoder cannot look at words it has not written yet.
    pub fn causal(t: usize) -> Self {
        Mask::of(Array2::from_shape_fn((t, t), |(i, j)| j <= i))
    }

    /// Query `i` sees no key more than `window - 1` places before it (a local or sliding-window
    /// layer: GPT-Neo's local layers, Mistral). Later keys are left to the causal mask.
    pub fn window(tq: usize, tk: usize, window: usize) -> Self {
        Mask::of(Array2::from_shape_fn((tq, tk), |(i, j)| j + window > i))
    }

    /// Keys where `key_valid` is false (PAD) are hidden from every query.
    pub fn key_padding(tq: usize, key_valid: &[bool]) -> Self {
        Mask::of(Array2::from_shape_fn((tq, key_valid.len()), |(_, j)| key_valid[j]))
    }

    /// Wraps a boolean matrix, `(Tq, Tk)`, true where attention is allowed.
    pub fn from_allowed(allowed: Array2<bool>) -> Self {
        Mask::of(allowed)
    }

    fn of(allowed: Array2<bool>) -> Self {
        let open = allowed.rows().into_iter().map(|row| row.iter().all(|&a| a)).collect();
        Mask { allowed, fallback: None, open }
    }

    /// The same mask, where a query that may see no key spreads its weight evenly over the
    /// keys `fallback` (Tq, Tk) marks: what transformers computes for such a row.
    pub fn with_fallback(self, fallback: Array2<bool>) -> Result<Mask> {
        if fallback.dim() != self.allowed.dim() {
            let ((a, b), (c, d)) = (fallback.dim(), self.allowed.dim());
            return Err(Error::shape("mask fallback", &[a, b], &[c, d]));
        }
        Ok(Mask { fallback: Some(fallback), ..self })
    }

    /// The keys a query that may see none spreads its weight over, if any.
    pub fn fallback(&self, query: usize) -> Option<ArrayView1<'_, bool>> {
        self.fallback.as_ref().map(|f| f.row(query))
    }

    /// Both masks must allow a position for the result to allow it (causal + padding). The
    /// result has no fallback.
    pub fn and(&self, other: &Mask) -> Result<Mask> {
        if self.shape() != other.shape() {
            let (a, b) = (self.shape(), other.shape());
            return Err(Error::shape("mask", &[b.0, b.1], &[a.0, a.1]));
        }
        let allowed = ndarray::Zip::from(&self.allowed).and(&other.allowed).map_collect(|&a, &b| a && b);
        Ok(Mask::of(allowed))
    }

    /// `(Tq, Tk)`.
    pub fn shape(&self) -> (usize, usize) {
        self.allowed.dim()
    }

    pub fn allows(&self, query: usize, key: usize) -> bool {
        self.allowed[[query, key]]
    }

    /// Whether query `query` sees every key.
    pub fn sees_all(&self, query: usize) -> bool {
        self.open[query]
    }

    pub fn allowed(&self) -> ArrayView2<'_, bool> {
        self.allowed.view()
    }

    /// Queries that may see no key at all: their weights are all zero (or spread over the
    /// fallback keys), never NaN.
    pub fn fully_masked_rows(&self) -> Vec<usize> {
        self.allowed.rows().into_iter().enumerate().filter(|(_, row)| !row.iter().any(|&a| a)).map(|(i, _)| i).collect()
    }

    /// Per query, one past the last key it may see (or, seeing none, spreads its weight over):
    /// every key from there on is hidden from it. None when that hides under a quarter of the
    /// keys (a padding mask): then nothing is worth leaving out. A causal mask gives i + 1.
    pub fn reach(&self) -> Option<Vec<usize>> {
        let (tq, tk) = self.shape();
        let last = |row: ArrayView1<bool>| row.iter().rposition(|&a| a).map_or(0, |j| j + 1);
        let reach: Vec<usize> = (0..tq)
            .map(|i| last(self.allowed.row(i)).max(self.fallback.as_ref().map_or(0, |f| last(f.row(i)))))
            .collect();
        let seen: usize = reach.iter().sum();
        (seen * 4 <= tq * tk * 3).then_some(reach)
    }
}

/// Requests name masks by string; a wrong name gets the same message as everywhere else.
impl TryFrom<String> for MaskKind {
    type Error = Error;

    fn try_from(name: String) -> Result<Self> {
        Self::parse(&name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causal_is_lower_triangular_with_the_diagonal() {
        let m = Mask::causal(3);
        let want = [[true, false, false], [true, true, false], [true, true, true]];
        for (i, row) in want.iter().enumerate() {
            for (j, &allowed) in row.iter().enumerate() {
                assert_eq!(m.allows(i, j), allowed, "causal ({i}, {j})");
            }
        }
    }

    #[test]
    fn causal_and_padding_combine() {
        let m = Mask::causal(3).and(&Mask::key_padding(3, &[true, true, false])).unwrap();
        assert!(m.allows(1, 1));
        assert!(!m.allows(2, 2), "a PAD key stays hidden even on the diagonal");
        assert!(m.fully_masked_rows().is_empty());
    }

    #[test]
    fn combining_masks_of_other_shapes_is_an_error() {
        let err = Mask::causal(3).and(&Mask::none(3, 4)).unwrap_err();
        assert!(err.to_string().contains("mask"), "{err}");
    }

    #[test]
    fn a_window_hides_keys_too_far_back() {
        let m = Mask::causal(4).and(&Mask::window(4, 4, 2)).unwrap();
        let seen: Vec<Vec<usize>> = (0..4).map(|i| (0..4).filter(|&j| m.allows(i, j)).collect()).collect();
        assert_eq!(seen, [vec![0], vec![0, 1], vec![1, 2], vec![2, 3]], "itself and one key back");
    }

    #[test]
    fn a_row_with_only_pad_keys_is_reported() {
        let m = Mask::key_padding(2, &[false, false]);
        assert_eq!(m.fully_masked_rows(), vec![0, 1]);
    }

    #[test]
    fn mask_names_parse() {
        for kind in MaskKind::ALL {
            let name = serde_json::to_value(kind).unwrap();
            assert_eq!(MaskKind::parse(name.as_str().unwrap()).unwrap(), kind);
        }
        assert_eq!(
            MaskKind::parse("diagonal").unwrap_err().to_string(),
            "unknown mask `diagonal`: use none, padding, causal, cross"
        );
    }

    #[test]
    fn a_mask_kind_builds_the_mask_of_a_padded_row() {
        let valid = [true, true, false];
        assert_eq!(
            MaskKind::Causal.build(&valid, &valid).unwrap(),
            Mask::causal(3).and(&Mask::key_padding(3, &valid)).unwrap()
        );
        assert_eq!(MaskKind::Padding.build(&valid, &valid).unwrap(), Mask::key_padding(3, &valid));
        assert_eq!(MaskKind::None.build(&valid, &valid).unwrap(), Mask::none(3, 3));
        let cross = MaskKind::Cross.build(&[true; 4], &valid).unwrap();
        assert_eq!(cross.shape(), (4, 3), "decoder queries by source keys");
        assert!(MaskKind::Causal.build(&[true; 4], &valid).is_err(), "a causal mask needs Tq = Tk");
    }
}
