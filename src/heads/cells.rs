//! The cells the scores read, worked out once per row and layer so that each head is one pass
//! over its weights: per scored query, the keys that count (no PAD, let through by the mask,
//! not left out by an option) and, per pattern, the few of them the pattern marks. A pattern
//! score is then a sum over a handful of cells per row, and every score of a head shares one
//! row total.

use std::collections::HashMap;

use ndarray::{ArrayView2, Axis};

use super::{Metric, Score, ScoreOptions};
use crate::run::RowAttention;
use crate::tokenize::{Token, TokenKind};

/// The tokens of one row, as the scores read them.
pub(super) struct RowTokens<'a> {
    pub queries: &'a [Token],
    pub keys: &'a [Token],
    pub query_valid: &'a [bool],
    pub key_valid: &'a [bool],
}

/// Per score wanted, its detection pattern as the keys it marks for each query (None for
/// `broad` and `distance`, which have none).
pub(super) type Patterns = Vec<Option<Vec<Vec<u32>>>>;

impl<'a> RowTokens<'a> {
    pub fn of(row: &'a RowAttention) -> Self {
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

    /// The detection pattern of each score in `wanted`, TransformerLens's where it has one.
    pub fn patterns(&self, wanted: &[Score]) -> Patterns {
        let (tq, tk) = (self.queries.len(), self.keys.len());
        let ids = Self::identities(self.queries);
        let keys_where =
            |mark: &dyn Fn(usize) -> bool| (0..tk).filter(|&j| mark(j)).map(|j| j as u32).collect::<Vec<_>>();
        let special = keys_where(&|j| self.keys[j].kind == TokenKind::Special);
        let punctuation = keys_where(&|j| is_punctuation(&self.keys[j]));
        let per_query = |marks: &dyn Fn(usize) -> Vec<u32>| (0..tq).map(marks).collect::<Vec<_>>();
        let within = |j: usize| (j < tk).then_some(j as u32);
        wanted
            .iter()
            .map(|score| {
                Some(match score {
                    Score::PreviousToken => per_query(&|i| i.checked_sub(1).and_then(within).into_iter().collect()),
                    Score::NextToken => per_query(&|i| within(i + 1).into_iter().collect()),
                    Score::CurrentToken => per_query(&|i| within(i).into_iter().collect()),
                    Score::FirstToken => per_query(&|_| within(0).into_iter().collect()),
                    Score::Special => per_query(&|_| special.clone()),
                    Score::Punctuation => per_query(&|_| punctuation.clone()),
                    // an earlier copy of this token
                    Score::DuplicateToken => {
                        per_query(&|i| (0..i.min(tk)).filter(|&j| ids[j] == ids[i]).map(|j| j as u32).collect())
                    }
                    // the token after an earlier copy: 1 ≤ j ≤ i, token j − 1 is token i
                    Score::Induction => {
                        per_query(&|i| (1..tk.min(i + 1)).filter(|&j| ids[j - 1] == ids[i]).map(|j| j as u32).collect())
                    }
                    Score::Broad | Score::Distance => return None,
                })
            })
            .collect()
    }
}

/// Whether a token stands for punctuation or symbols only (`.`, `,`, `?`, `…`, `。`).
pub(super) fn is_punctuation(token: &Token) -> bool {
    let text = token.text.trim();
    matches!(token.kind, TokenKind::Word | TokenKind::Continuation)
        && !text.is_empty()
        && text.chars().all(|c| !c.is_alphanumeric() && !c.is_whitespace())
}

/// The cells of one layer of one row that the scores read.
pub(super) struct Cells {
    /// The query rows scored: not PAD, in the options' range.
    rows: Vec<usize>,
    /// Per scored row, the keys it may see (no PAD, let through by the mask), as a range
    /// when they are one (padding, causal and window masks make ranges), else listed.
    seen: Vec<Keys>,
    /// Per scored row, the cells of `seen` an option leaves out (key 0, the diagonal).
    left_out: Vec<Vec<u32>>,
    /// Per wanted score, per scored row, the pattern's keys among the counted ones.
    on: Vec<Option<Vec<Vec<u32>>>>,
    /// Per scored row, log₂ of its count of keys, the most entropy it has (none under two).
    most_entropy: Vec<Option<f64>>,
}

/// The keys of one row.
enum Keys {
    Range(usize, usize),
    List(Vec<u32>),
}

impl Keys {
    fn contains(&self, j: u32) -> bool {
        match self {
            Keys::Range(lo, hi) => (*lo..*hi).contains(&(j as usize)),
            Keys::List(list) => list.binary_search(&j).is_ok(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Keys::Range(lo, hi) => hi - lo,
            Keys::List(list) => list.len(),
        }
    }
}

/// Σ p, Σ −p·log₂ p and Σ p·|i − j| over the weights `a` at keys `keys` of query `i`; the last
/// two only when `spread`. Row sums in f32, as the weights are; rows are added in f64.
fn row_sums(a: &[f32], keys: &Keys, i: usize, spread: bool) -> (f32, f32, f32) {
    let one = |(sum, h, far): (f32, f32, f32), (j, p): (usize, f32)| {
        let h = if p > 0.0 { h - p * log2(p) } else { h };
        (sum + p, h, far + p * i.abs_diff(j) as f32)
    };
    match (keys, spread) {
        (Keys::Range(lo, hi), false) => range_sums::<false>(&a[*lo..*hi], *lo, i),
        (Keys::Range(lo, hi), true) => range_sums::<true>(&a[*lo..*hi], *lo, i),
        (Keys::List(list), false) => (list.iter().map(|&j| a[j as usize]).sum(), 0.0, 0.0),
        (Keys::List(list), true) => list.iter().map(|&j| (j as usize, a[j as usize])).fold((0.0, 0.0, 0.0), one),
    }
}

/// [`row_sums`] over the contiguous keys `lo..` (the weights `a`), in four lanes the compiler
/// turns into SIMD: most rows of most masks are one range of keys. The sum adds in the same
/// order with the `SPREAD` terms or without, so a head's score has the same bits whatever other
/// scores are asked with it.
fn range_sums<const SPREAD: bool>(a: &[f32], lo: usize, i: usize) -> (f32, f32, f32) {
    const LANES: usize = 4;
    let (mut sum, mut h, mut far) = ([0.0f32; LANES], [0.0f32; LANES], [0.0f32; LANES]);
    let query = i as f32;
    let chunks = a.chunks_exact(LANES);
    let rest = chunks.remainder();
    for (c, chunk) in chunks.enumerate() {
        for l in 0..LANES {
            let p = chunk[l];
            sum[l] += p;
            if SPREAD {
                // p = 0 gives 0·log₂(tiny) = 0, without a branch
                h[l] -= p * log2(p.max(f32::MIN_POSITIVE));
                far[l] += p * (query - (lo + c * LANES + l) as f32).abs();
            }
        }
    }
    let start = lo + a.len() - rest.len();
    for (k, &p) in rest.iter().enumerate() {
        sum[0] += p;
        if SPREAD {
            h[0] -= p * log2(p.max(f32::MIN_POSITIVE));
            far[0] += p * (query - (start + k) as f32).abs();
        }
    }
    (sum.iter().sum(), h.iter().sum(), far.iter().sum())
}

impl Cells {
    pub fn new(tokens: &RowTokens, allowed: ArrayView2<bool>, patterns: &Patterns, options: &ScoreOptions) -> Self {
        let (tq, tk) = allowed.dim();
        let range = options.queries.clone().unwrap_or(0..tq);
        let rows: Vec<usize> = range.filter(|&i| i < tq && tokens.query_valid[i]).collect();
        let seen: Vec<Keys> = rows
            .iter()
            .map(|&i| {
                let list: Vec<u32> =
                    (0..tk).filter(|&j| tokens.key_valid[j] && allowed[[i, j]]).map(|j| j as u32).collect();
                match (list.first(), list.last()) {
                    (Some(&lo), Some(&hi)) if (hi - lo) as usize + 1 == list.len() => {
                        Keys::Range(lo as usize, hi as usize + 1)
                    }
                    (None, _) | (_, None) => Keys::Range(0, 0),
                    _ => Keys::List(list),
                }
            })
            .collect();
        let excluded =
            |i: usize, j: u32| (options.exclude_bos && j == 0) || (options.exclude_current_token && i == j as usize);
        let left_out: Vec<Vec<u32>> = rows
            .iter()
            .zip(&seen)
            .map(|(&i, keys)| {
                // at query 0, key 0 is both the first and the current token: once
                let last = if i == 0 { 1 } else { 2 };
                [0, i as u32][..last].iter().copied().filter(|&j| excluded(i, j) && keys.contains(j)).collect()
            })
            .collect();
        let on = patterns
            .iter()
            .map(|pattern| {
                pattern.as_ref().map(|marks| {
                    rows.iter()
                        .zip(&seen)
                        .map(|(&i, keys)| {
                            marks[i].iter().copied().filter(|&j| keys.contains(j) && !excluded(i, j)).collect()
                        })
                        .collect()
                })
            })
            .collect();
        let most_entropy = seen.iter().map(|keys| (keys.len() >= 2).then(|| (keys.len() as f64).log2())).collect();
        Cells { rows, seen, left_out, on, most_entropy }
    }

    /// Each wanted score of one head, (Tq, Tk), in one pass over its rows.
    pub fn score(&self, head: ArrayView2<f32>, wanted: &[Score], options: &ScoreOptions) -> Vec<f32> {
        let mut total = 0.0f64; // Σ A over the counted cells
        let mut on = vec![0.0f64; wanted.len()]; // Σ A over each pattern's cells
        let mut marked = vec![0usize; wanted.len()]; // how many cells each pattern marks
        let (mut entropy, mut spread_rows, mut far) = (0.0f64, 0usize, 0.0f64);
        let spread = wanted.iter().any(|s| matches!(s, Score::Broad | Score::Distance));
        for (r, &i) in self.rows.iter().enumerate() {
            let view = head.index_axis(Axis(0), i);
            let owned;
            let a: &[f32] = match view.as_slice() {
                Some(a) => a,
                None => {
                    owned = view.to_vec();
                    &owned
                }
            };
            let keys = &self.seen[r];
            let (sum, h, distance) = row_sums(a, keys, i, spread);
            total += sum as f64 - self.left_out[r].iter().map(|&j| a[j as usize] as f64).sum::<f64>();
            for (k, pattern) in self.on.iter().enumerate() {
                if let Some(rows) = pattern {
                    on[k] += rows[r].iter().map(|&j| a[j as usize] as f64).sum::<f64>();
                    marked[k] += rows[r].len();
                }
            }
            far += distance as f64;
            // a row that may see one key or none has no spread to measure
            if let Some(most) = self.most_entropy[r] {
                entropy += h as f64 / most;
                spread_rows += 1;
            }
        }
        let rows = self.rows.len().max(1) as f64;
        wanted
            .iter()
            .enumerate()
            .map(|(k, score)| {
                let value = match score {
                    Score::Broad => entropy / spread_rows.max(1) as f64,
                    Score::Distance => far / rows,
                    // Σ|A − D| = Σ A off the pattern + Σ (1 − A) on it = total + marked − 2·on
                    _ if options.metric == Metric::Abs => {
                        let distance = total + marked[k] as f64 - 2.0 * on[k];
                        1.0 - (distance / rows * 1000.0).round() / 1000.0
                    }
                    _ if total > 0.0 => on[k] / total,
                    _ => 0.0,
                };
                value as f32
            })
            .collect()
    }
}

/// log₂ of a weight in (0, 1], to about 1e-7: the exponent, and the mantissa m ∈ [√½, √2) by
/// 2·atanh((m − 1)/(m + 1))/ln 2 in five terms. A fraction of the time of the library's log2 in
/// wasm, where `broad` takes one per cell of every head.
fn log2(p: f32) -> f32 {
    let bits = p.to_bits();
    let m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
    // selects, not branches: the loops that call this stay vectorised
    let big = m > std::f32::consts::SQRT_2;
    let exponent = ((bits >> 23) & 0xff) as i32 - 127 + i32::from(big);
    let m = if big { m * 0.5 } else { m };
    let t = (m - 1.0) / (m + 1.0);
    let t2 = t * t;
    let series = t * (2.0 + t2 * (2.0 / 3.0 + t2 * (2.0 / 5.0 + t2 * (2.0 / 7.0 + t2 * (2.0 / 9.0)))));
    exponent as f32 + series * std::f32::consts::LOG2_E
}

#[cfg(test)]
mod tests {
    use ndarray::{Array2, Array3};

    use super::*;

    fn tokens(words: &[&str]) -> Vec<Token> {
        words.iter().map(|w| Token::word(w)).collect()
    }

    fn causal(n: usize) -> Array2<bool> {
        Array2::from_shape_fn((n, n), |(i, j)| j <= i)
    }

    /// Every score in `wanted` of each head of `layer` (H, 4, 4) over four words, causal.
    fn score_of(words: &[&str], layer: &Array3<f32>, wanted: &[Score], options: &ScoreOptions) -> Vec<Vec<f32>> {
        let t = tokens(words);
        let valid = vec![true; t.len()];
        let row = RowTokens { queries: &t, keys: &t, query_valid: &valid, key_valid: &valid };
        let cells = Cells::new(&row, causal(t.len()).view(), &row.patterns(wanted), options);
        layer.axis_iter(Axis(0)).map(|head| cells.score(head, wanted, options)).collect()
    }

    /// A causal (4, 4) head that looks at the previous token, and one that looks at itself.
    fn previous_and_self() -> Array3<f32> {
        let mut w = Array3::zeros((2, 4, 4));
        w[[0, 0, 0]] = 1.0;
        for i in 1..4 {
            w[[0, i, i - 1]] = 1.0;
        }
        for i in 0..4 {
            w[[1, i, i]] = 1.0;
        }
        w
    }

    #[test]
    fn previous_and_current_heads_score_as_their_patterns() {
        let w = previous_and_self();
        let words = ["a", "b", "c", "d"];
        let o = ScoreOptions::default();
        let got = score_of(&words, &w, &[Score::PreviousToken, Score::CurrentToken], &o);
        // head 0: rows 1..4 on the previous token, row 0 on itself: 3 of 4 units of weight
        assert_eq!(got, vec![vec![0.75, 0.25], vec![0.0, 1.0]]);
        // leaving the BOS column out leaves row 1's weight out of the sum as well
        let no_bos = ScoreOptions { exclude_bos: true, ..o.clone() };
        assert_eq!(score_of(&words, &w, &[Score::PreviousToken], &no_bos), vec![vec![1.0], vec![0.0]]);
        // abs: |A − D| sums to 1 (row 0) over 4 rows → 1 − 0.25; the diagonal head misses
        // 3 cells of the pattern and puts 4 units off it → 1 − 7/4
        let abs = ScoreOptions { metric: Metric::Abs, ..o };
        assert_eq!(score_of(&words, &w, &[Score::PreviousToken], &abs), vec![vec![0.75], vec![-0.75]]);
    }

    #[test]
    fn induction_looks_at_what_followed_an_earlier_copy() {
        // a b a b: query 2 (a) → key 1 (b followed a); query 3 (b) → key 2 (a followed b)
        let t = tokens(&["a", "b", "a", "b"]);
        let row = RowTokens { queries: &t, keys: &t, query_valid: &[], key_valid: &[] };
        let patterns = row.patterns(&[Score::Induction, Score::DuplicateToken]);
        assert_eq!(patterns[0].as_ref().unwrap(), &vec![vec![], vec![], vec![1], vec![2]]);
        assert_eq!(patterns[1].as_ref().unwrap(), &vec![vec![], vec![], vec![0], vec![1]]);
    }

    #[test]
    fn broad_is_zero_for_one_key_and_one_for_an_even_row() {
        let mut w = Array3::zeros((2, 4, 4));
        for i in 0..4 {
            w[[0, i, 0]] = 1.0;
            for j in 0..=i {
                w[[1, i, j]] = 1.0 / (i + 1) as f32;
            }
        }
        let got = score_of(&["a", "b", "c", "d"], &w, &[Score::Broad, Score::Distance], &ScoreOptions::default());
        assert_eq!(got[0], vec![0.0, (0.0 + 1.0 + 2.0 + 3.0) / 4.0]);
        assert!((got[1][0] - 1.0).abs() < 1e-6, "{got:?}");
    }

    #[test]
    fn a_score_asked_alone_has_the_bits_it_has_among_all() {
        // 13 keys: rows past four keys sum in lanes, with a remainder; irregular weights round
        let words: Vec<String> = (0..13).map(|i| format!("w{}", i % 5)).collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        // causal: 0 past the diagonal
        let w = Array3::from_shape_fn((3, 13, 13), |(h, i, j)| {
            f32::from(u8::from(j <= i)) * (1.0 + ((h * 31 + i * 7 + j * 13) % 17) as f32).ln() / (i + 1) as f32
        });
        let together = score_of(&words, &w, &Score::ALL, &ScoreOptions::default());
        for (k, &score) in Score::ALL.iter().enumerate() {
            let alone = score_of(&words, &w, &[score], &ScoreOptions::default());
            let bits = |rows: &[Vec<f32>], k: usize| rows.iter().map(|r| r[k].to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&alone, 0), bits(&together, k), "{}", score.name());
        }
    }

    #[test]
    fn the_fast_log2_is_the_library_s_within_1e_6() {
        let mut p = 1.0f32;
        while p > 1e-30 {
            assert!((log2(p) - p.log2()).abs() < 1e-6 * p.log2().abs().max(1.0), "{p}: {} vs {}", log2(p), p.log2());
            p *= 0.937;
        }
    }

    #[test]
    fn punctuation_is_a_word_of_marks_only() {
        assert!(is_punctuation(&Token::word(".")));
        assert!(is_punctuation(&Token::word("…")));
        assert!(!is_punctuation(&Token::word("a.")));
        assert!(!is_punctuation(&Token::marker("[SEP]", TokenKind::Special)));
    }
}
