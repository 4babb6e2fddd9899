//! Finding heads: one number per layer and head that says how much a head does one thing —
//! look at the previous token, at an earlier copy of the current token, at what followed it
//! (induction), at the first token, at special tokens or punctuation, broadly or far — and
//! how much weight a head moves from chosen query tokens to chosen key tokens.
//!
//! The pattern scores are TransformerLens's (`head_detector.py`): a 0/1 detection pattern D
//! built from the row's own tokens, and per head Σ(A⊙D)/ΣA (`mul`, its default) or
//! 1 − round(Σ|A − D| / Tq, 3) (`abs`), with its `exclude_bos` (key 0 left out) and
//! `exclude_current_token` (the diagonal left out). Here PAD queries, PAD keys and masked
//! cells are left out too; on a row without padding the numbers are TransformerLens's.

use std::ops::Range;

use ndarray::{Array2, Axis};
use serde::Serialize;

use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::run::RowAttention;

mod cells;
#[cfg(not(target_arch = "wasm32"))]
pub mod each;
mod probe;
use cells::{Cells, RowTokens};
pub use probe::{induction_probe, Probe, PROBE_LENGTH};

/// What a head is scored for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Score {
    /// D[i, i−1] = 1.
    PreviousToken,
    /// D[i, j] = 1 where token j is token i and j < i.
    DuplicateToken,
    /// D[i, j] = 1 where token j−1 is token i and 1 ≤ j ≤ i: the token that followed an
    /// earlier copy of this one.
    Induction,
    /// D[i, i+1] = 1 (an encoder's look ahead).
    NextToken,
    /// D[i, i] = 1.
    CurrentToken,
    /// D[i, 0] = 1: the share on the first token, the attention sink.
    FirstToken,
    /// D[i, j] = 1 where key j is a special token ([CLS], [SEP], </s>, BOS).
    Special,
    /// D[i, j] = 1 where key j is punctuation.
    Punctuation,
    /// Mean row entropy over its most (log₂ of the keys a row may see): 0 sharp, 1 even.
    Broad,
    /// Mean |i − j| under the weights, in tokens.
    Distance,
}

impl Score {
    pub const ALL: [Score; 10] = [
        Score::PreviousToken,
        Score::DuplicateToken,
        Score::Induction,
        Score::NextToken,
        Score::CurrentToken,
        Score::FirstToken,
        Score::Special,
        Score::Punctuation,
        Score::Broad,
        Score::Distance,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Score::PreviousToken => "previous_token",
            Score::DuplicateToken => "duplicate_token",
            Score::Induction => "induction",
            Score::NextToken => "next_token",
            Score::CurrentToken => "current_token",
            Score::FirstToken => "first_token",
            Score::Special => "special",
            Score::Punctuation => "punctuation",
            Score::Broad => "broad",
            Score::Distance => "distance",
        }
    }

    pub fn parse(name: &str) -> Result<Score> {
        Score::ALL
            .into_iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| Error::unknown("score", name, &Score::ALL.map(Score::name)))
    }

    /// Whether the score compares query and key positions, so it needs queries and keys to
    /// be the same tokens (self-attention).
    pub fn positional(self) -> bool {
        !matches!(self, Score::FirstToken | Score::Special | Score::Punctuation | Score::Broad)
    }
}

/// How a pattern score compares weights with its pattern.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Σ(A⊙D)/ΣA: the share of the weight that falls on the pattern.
    #[default]
    Mul,
    /// 1 − round(Σ|A − D| / rows, 3): closeness to the pattern itself.
    Abs,
}

impl Metric {
    pub fn name(self) -> &'static str {
        match self {
            Metric::Mul => "mul",
            Metric::Abs => "abs",
        }
    }

    pub fn parse(name: &str) -> Result<Metric> {
        match name {
            "mul" => Ok(Metric::Mul),
            "abs" => Ok(Metric::Abs),
            _ => Err(Error::unknown("metric", name, &["mul", "abs"])),
        }
    }
}

/// TransformerLens's options, and which queries are scored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScoreOptions {
    pub metric: Metric,
    /// Leave key 0 out (the BOS token, where many heads rest).
    pub exclude_bos: bool,
    /// Leave the diagonal out.
    pub exclude_current_token: bool,
    /// The query positions scored; default every one (the induction probe scores its second half).
    pub queries: Option<Range<usize>>,
}

/// Score `score` of every layer and head of one batch row at `place`: (L, H).
pub fn scores(row: &RowAttention, place: Place, score: Score, options: &ScoreOptions) -> Result<Array2<f32>> {
    Ok(scores_of(row, place, &[score], options)?.remove(0))
}

/// Scores `wanted` of every layer and head of one batch row at `place`, (L, H) each, in one
/// pass over each head's weights: each has the bits it has asked alone.
pub fn scores_of(
    row: &RowAttention,
    place: Place,
    wanted: &[Score],
    options: &ScoreOptions,
) -> Result<Vec<Array2<f32>>> {
    if let Some(score) = wanted.iter().find(|s| place == Place::Cross && s.positional()) {
        return Err(Error::ScoreNeedsSelf { score: score.name().to_string(), place: place.name().to_string() });
    }
    table(row, wanted, options)
}

/// Every score in `wanted` of every layer and head of one row, (L, H) each, in one pass over
/// each head's weights.
fn table(row: &RowAttention, wanted: &[Score], options: &ScoreOptions) -> Result<Vec<Array2<f32>>> {
    let tokens = RowTokens::of(row);
    let tq = tokens.queries.len();
    if let Some(range) = &options.queries {
        if range.is_empty() {
            return Err(Error::EmptySelection { side: "queries".into() });
        }
        if range.end > tq {
            return Err(Error::PositionOutOfRange {
                side: "queries".into(),
                position: range.end.saturating_sub(1),
                count: tq,
            });
        }
    }
    let patterns = tokens.patterns(wanted);
    let mut out = vec![Array2::zeros((row.layers(), row.heads())); wanted.len()]; // (L, H) each
    for layer in 0..row.layers() {
        let weights = row.layer(layer)?;
        let mask = row.mask(layer)?;
        let cells = Cells::new(&tokens, mask.allowed(), &patterns, options);
        for (h, head) in weights.axis_iter(Axis(0)).enumerate() {
            for (k, value) in cells.score(head, wanted, options).into_iter().enumerate() {
                out[k][[layer, h]] = value;
            }
        }
    }
    Ok(out)
}

/// For every layer and head of one row, the mean over `queries` of the weight each puts on
/// `keys`: (L, H). How much a head moves from these tokens to those (그것 → 동물). A position
/// given twice counts once; PAD positions are no tokens of the sentence and are left out.
pub fn mass(row: &RowAttention, queries: &[usize], keys: &[usize]) -> Result<Array2<f32>> {
    let (tq, tk) = row.size();
    let mut chosen = Vec::with_capacity(2);
    for (side, positions, count, valid) in
        [("queries", queries, tq, &row.query_valid), ("keys", keys, tk, &row.key_valid)]
    {
        if let Some(&p) = positions.iter().find(|&&p| p >= count) {
            return Err(Error::PositionOutOfRange { side: side.into(), position: p, count });
        }
        let mut kept: Vec<usize> = positions.iter().copied().filter(|&p| valid[p]).collect();
        kept.sort_unstable();
        kept.dedup();
        if kept.is_empty() {
            return Err(Error::EmptySelection { side: side.into() });
        }
        chosen.push(kept);
    }
    let (queries, keys) = (&chosen[0], &chosen[1]);
    let mut out = Array2::zeros((row.layers(), row.heads())); // (L, H)
    for layer in 0..row.layers() {
        let weights = row.layer(layer)?; // (H, Tq, Tk)
        for (h, head) in weights.axis_iter(Axis(0)).enumerate() {
            let total: f64 = queries.iter().map(|&i| keys.iter().map(|&j| head[[i, j]] as f64).sum::<f64>()).sum();
            out[[layer, h]] = (total / queries.len() as f64) as f32;
        }
    }
    Ok(out)
}

/// Every score of every layer and head of one row, in the order of [`Score::ALL`], those a
/// place cannot take left out: what `headmap heads` writes and the page colours the grid by.
pub fn all_scores(row: &RowAttention, place: Place, options: &ScoreOptions) -> Result<Vec<(Score, Array2<f32>)>> {
    let wanted: Vec<Score> = Score::ALL.into_iter().filter(|s| place != Place::Cross || !s.positional()).collect();
    Ok(wanted.iter().copied().zip(table(row, &wanted, options)?).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_ones_are_refused() {
        for s in Score::ALL {
            assert_eq!(Score::parse(s.name()).unwrap(), s);
        }
        assert!(matches!(Score::parse("prev"), Err(Error::UnknownName { .. })));
        for m in [Metric::Mul, Metric::Abs] {
            assert_eq!(Metric::parse(m.name()).unwrap(), m);
        }
    }
}
