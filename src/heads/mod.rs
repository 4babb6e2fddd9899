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

use std::collections::HashMap;
use std::ops::Range;

use ndarray::{Array2, ArrayView2, ArrayView3, Axis};
use serde::Serialize;

use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::models::run::RowAttention;
use crate::tokenize::{Token, TokenKind};

mod probe;
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

/// The tokens of one row, as the scores read them.
struct RowTokens<'a> {
    queries: &'a [Token],
    keys: &'a [Token],
    query_valid: &'a [bool],
    key_valid: &'a [bool],
}

impl<'a> RowTokens<'a> {
    fn of(row: &'a RowAttention) -> Self {
        RowTokens { queries: &row.queries, keys: &row.keys, query_valid: &row.query_valid, key_valid: &row.key_valid }
    }

    /// Each token's identity: equal pieces (the vocabulary's spelling, one per id) are one
    /// token, as equal ids are in TransformerLens.
    fn identities(tokens: &[Token]) -> Vec<usize> {
        let mut seen = HashMap::new();
        tokens
            .iter()
            .map(|t| {
                let n = seen.len();
                *seen.entry(t.piece.as_str()).or_insert(n)
            })
            .collect()
    }

    /// Score `score`'s detection pattern, (Tq, Tk); `None` for the scores that have none.
    fn pattern(&self, score: Score) -> Option<Array2<bool>> {
        let (tq, tk) = (self.queries.len(), self.keys.len());
        let ids = Self::identities(self.queries);
        let special = |j: usize| self.keys[j].kind == TokenKind::Special;
        let punctuation = |j: usize| is_punctuation(&self.keys[j]);
        let d = |i: usize, j: usize| match score {
            Score::PreviousToken => j + 1 == i,
            Score::DuplicateToken => j < i && ids[j] == ids[i],
            Score::Induction => (1..=i).contains(&j) && ids[j - 1] == ids[i],
            Score::NextToken => j == i + 1,
            Score::CurrentToken => j == i,
            Score::FirstToken => j == 0,
            Score::Special => special(j),
            Score::Punctuation => punctuation(j),
            Score::Broad | Score::Distance => false,
        };
        (!matches!(score, Score::Broad | Score::Distance)).then(|| Array2::from_shape_fn((tq, tk), |(i, j)| d(i, j)))
    }
}

/// Whether a token stands for punctuation or symbols only (`.`, `,`, `?`, `…`, `。`).
fn is_punctuation(token: &Token) -> bool {
    let text = token.text.trim();
    matches!(token.kind, TokenKind::Word | TokenKind::Continuation)
        && !text.is_empty()
        && text.chars().all(|c| !c.is_alphanumeric() && !c.is_whitespace())
}

/// Score `score` of every head of one layer: `weights` (H, Tq, Tk), `allowed` (Tq, Tk).
fn score_layer(
    weights: ArrayView3<f32>,
    allowed: ArrayView2<bool>,
    tokens: &RowTokens,
    pattern: Option<&Array2<bool>>,
    score: Score,
    options: &ScoreOptions,
) -> Vec<f32> {
    let (_, tq, tk) = weights.dim();
    let range = options.queries.clone().unwrap_or(0..tq);
    let rows: Vec<usize> = range.filter(|&i| i < tq && tokens.query_valid[i]).collect();
    // a cell counts when its key is no PAD, the mask lets it through and no option leaves it out
    let counts = |i: usize, j: usize| {
        tokens.key_valid[j]
            && allowed[[i, j]]
            && !(options.exclude_bos && j == 0)
            && !(options.exclude_current_token && i == j)
    };
    weights
        .axis_iter(Axis(0))
        .map(|head| {
            let value = match (score, pattern) {
                (Score::Broad, _) => broad(head, allowed, tokens, &rows),
                (Score::Distance, _) => distance(head, tokens, &rows),
                (_, Some(d)) if options.metric == Metric::Abs => {
                    let mut sum = 0.0f64;
                    for &i in &rows {
                        for j in (0..tk).filter(|&j| counts(i, j)) {
                            sum += (head[[i, j]] as f64 - if d[[i, j]] { 1.0 } else { 0.0 }).abs();
                        }
                    }
                    1.0 - (sum / rows.len().max(1) as f64 * 1000.0).round() / 1000.0
                }
                (_, Some(d)) => {
                    let (mut on, mut all) = (0.0f64, 0.0f64);
                    for &i in &rows {
                        for j in (0..tk).filter(|&j| counts(i, j)) {
                            let a = head[[i, j]] as f64;
                            all += a;
                            if d[[i, j]] {
                                on += a;
                            }
                        }
                    }
                    if all > 0.0 {
                        on / all
                    } else {
                        0.0
                    }
                }
                (_, None) => 0.0,
            };
            value as f32
        })
        .collect()
}

/// Mean over `rows` of each row's entropy over log₂ of the keys it may see (rows that may see
/// one key or none have no spread and are left out).
fn broad(head: ArrayView2<f32>, allowed: ArrayView2<bool>, tokens: &RowTokens, rows: &[usize]) -> f64 {
    let (mut sum, mut n) = (0.0f64, 0usize);
    for &i in rows {
        let seen = (0..head.ncols()).filter(|&j| allowed[[i, j]] && tokens.key_valid[j]).count();
        if seen < 2 {
            continue;
        }
        let h: f64 = head.row(i).iter().filter(|&&p| p > 0.0).map(|&p| -(p as f64) * (p as f64).log2()).sum();
        sum += h / (seen as f64).log2();
        n += 1;
    }
    if n > 0 {
        sum / n as f64
    } else {
        0.0
    }
}

/// Mean over `rows` of Σⱼ A[i, j]·|i − j|.
fn distance(head: ArrayView2<f32>, tokens: &RowTokens, rows: &[usize]) -> f64 {
    let total: f64 = rows
        .iter()
        .map(|&i| {
            head.row(i)
                .iter()
                .enumerate()
                .filter(|&(j, _)| tokens.key_valid[j])
                .map(|(j, &a)| a as f64 * i.abs_diff(j) as f64)
                .sum::<f64>()
        })
        .sum();
    if rows.is_empty() {
        0.0
    } else {
        total / rows.len() as f64
    }
}

/// Score `score` of every layer and head of one batch row at `place`: (L, H).
pub fn scores(row: &RowAttention, place: Place, score: Score, options: &ScoreOptions) -> Result<Array2<f32>> {
    if place == Place::Cross && score.positional() {
        return Err(Error::ScoreNeedsSelf { score: score.name().to_string(), place: place.name().to_string() });
    }
    let tokens = RowTokens::of(row);
    if let Some(range) = &options.queries {
        let tq = tokens.queries.len();
        if range.is_empty() || range.end > tq {
            return Err(Error::PositionOutOfRange {
                side: "queries".into(),
                position: range.end.saturating_sub(1),
                count: tq,
            });
        }
    }
    let pattern = tokens.pattern(score);
    let mut out = Array2::zeros((row.layers(), row.heads())); // (L, H)
    for layer in 0..row.layers() {
        let weights = row.layer(layer)?;
        let mask = row.mask(layer)?;
        let values = score_layer(weights.view(), mask.allowed(), &tokens, pattern.as_ref(), score, options);
        out.row_mut(layer).assign(&ndarray::Array1::from(values));
    }
    Ok(out)
}

/// For every layer and head of one row, the mean over `queries` of the weight each puts on
/// `keys`: (L, H). How much a head moves from these tokens to those (그것 → 동물).
pub fn mass(row: &RowAttention, queries: &[usize], keys: &[usize]) -> Result<Array2<f32>> {
    let (tq, tk) = row.size();
    for (side, positions, count) in [("queries", queries, tq), ("keys", keys, tk)] {
        if positions.is_empty() {
            return Err(Error::EmptySelection { side: side.into() });
        }
        if let Some(&p) = positions.iter().find(|&&p| p >= count) {
            return Err(Error::PositionOutOfRange { side: side.into(), position: p, count });
        }
    }
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
    Score::ALL
        .into_iter()
        .filter(|s| place != Place::Cross || !s.positional())
        .map(|s| Ok((s, scores(row, place, s, options)?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(words: &[&str]) -> Vec<Token> {
        words.iter().map(|w| Token::word(w)).collect()
    }

    /// A causal (4, 4) head that looks at the previous token, and one that looks at itself.
    fn layer() -> ndarray::Array3<f32> {
        let mut w = ndarray::Array3::zeros((2, 4, 4));
        w[[0, 0, 0]] = 1.0;
        for i in 1..4 {
            w[[0, i, i - 1]] = 1.0;
        }
        for i in 0..4 {
            w[[1, i, i]] = 1.0;
        }
        w
    }

    fn causal(n: usize) -> Array2<bool> {
        Array2::from_shape_fn((n, n), |(i, j)| j <= i)
    }

    fn score_of(words: &[&str], score: Score, options: &ScoreOptions) -> Vec<f32> {
        let t = tokens(words);
        let valid = vec![true; t.len()];
        let row = RowTokens { queries: &t, keys: &t, query_valid: &valid, key_valid: &valid };
        score_layer(layer().view(), causal(4).view(), &row, row.pattern(score).as_ref(), score, options)
    }

    #[test]
    fn previous_and_current_heads_score_as_their_patterns() {
        let o = ScoreOptions::default();
        // head 0: rows 1..4 on the previous token, row 0 on itself: 3 of 4 units of weight
        assert_eq!(score_of(&["a", "b", "c", "d"], Score::PreviousToken, &o), vec![0.75, 0.0]);
        assert_eq!(score_of(&["a", "b", "c", "d"], Score::CurrentToken, &o), vec![0.25, 1.0]);
        // leaving the BOS column out leaves row 1's weight out of the sum as well
        let no_bos = ScoreOptions { exclude_bos: true, ..o.clone() };
        assert_eq!(score_of(&["a", "b", "c", "d"], Score::PreviousToken, &no_bos), vec![1.0, 0.0]);
        // abs: |A − D| sums to 1 (row 0) over 4 rows → 1 − 0.25; the diagonal head misses
        // 3 cells of the pattern and puts 4 units off it → 1 − 7/4
        let abs = ScoreOptions { metric: Metric::Abs, ..o };
        assert_eq!(score_of(&["a", "b", "c", "d"], Score::PreviousToken, &abs), vec![0.75, -0.75]);
    }

    #[test]
    fn induction_looks_at_what_followed_an_earlier_copy() {
        // a b a b: query 2 (a) → key 1 (b followed a); query 3 (b) → key 2 (a followed b)
        let t = RowTokens { queries: &tokens(&["a", "b", "a", "b"]), keys: &[], query_valid: &[], key_valid: &[] };
        let keys = tokens(&["a", "b", "a", "b"]);
        let t = RowTokens { keys: &keys, ..t };
        let d = t.pattern(Score::Induction).unwrap();
        let on: Vec<(usize, usize)> = d.indexed_iter().filter(|(_, &x)| x).map(|(ij, _)| ij).collect();
        assert_eq!(on, vec![(2, 1), (3, 2)]);
        let dup = t.pattern(Score::DuplicateToken).unwrap();
        let on: Vec<(usize, usize)> = dup.indexed_iter().filter(|(_, &x)| x).map(|(ij, _)| ij).collect();
        assert_eq!(on, vec![(2, 0), (3, 1)]);
    }

    #[test]
    fn broad_is_zero_for_one_key_and_one_for_an_even_row() {
        let t = tokens(&["a", "b", "c", "d"]);
        let valid = vec![true; 4];
        let row = RowTokens { queries: &t, keys: &t, query_valid: &valid, key_valid: &valid };
        let mut w = ndarray::Array3::zeros((2, 4, 4));
        for i in 0..4 {
            w[[0, i, 0]] = 1.0;
            for j in 0..=i {
                w[[1, i, j]] = 1.0 / (i + 1) as f32;
            }
        }
        let got = score_layer(w.view(), causal(4).view(), &row, None, Score::Broad, &ScoreOptions::default());
        assert_eq!(got[0], 0.0);
        assert!((got[1] - 1.0).abs() < 1e-6, "{got:?}");
        let far = score_layer(w.view(), causal(4).view(), &row, None, Score::Distance, &ScoreOptions::default());
        assert_eq!(far[0], (0.0 + 1.0 + 2.0 + 3.0) / 4.0);
    }

    #[test]
    fn punctuation_is_a_word_of_marks_only() {
        assert!(is_punctuation(&Token::word(".")));
        assert!(is_punctuation(&Token::word("…")));
        assert!(!is_punctuation(&Token::word("a.")));
        assert!(!is_punctuation(&Token::marker("[SEP]", TokenKind::Special)));
    }

    #[test]
    fn names_round_trip_and_unknown_ones_are_refused() {
        for s in Score::ALL {
            assert_eq!(Score::parse(s.name()).unwrap(), s);
        }
        assert!(matches!(Score::parse("prev"), Err(Error::UnknownName { .. })));
    }
}
