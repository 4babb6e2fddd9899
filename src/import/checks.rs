//! A place of the file made a row: its tokens as given (kinds read or guessed), and every
//! layer's weights checked against the mask those tokens build.

use std::sync::Arc;

use ndarray::{Array3, Axis};

use super::document::DocumentPlace;
use super::weights::Layers;
use super::MAX_TOKENS;
use crate::attention::mask::MaskKind;
use crate::attention::place::Place;
use crate::error::FileProblem;
use crate::run::{Row, RowAttention};
use crate::tokenize::{short_label, Token, TokenKind};

/// Tokens on both sides, not too many, and as many on each side of a self-attention place.
pub(super) fn check_sides(at: &str, place: Place, doc: &DocumentPlace) -> std::result::Result<(), FileProblem> {
    for (side, count) in [("queries", doc.queries.len()), ("keys", doc.keys.len())] {
        if count > MAX_TOKENS {
            return Err(FileProblem::TooMany {
                at: format!("{at}.{side}"),
                what: "tokens".into(),
                count,
                max: MAX_TOKENS,
            });
        }
    }
    if place != Place::Cross && doc.queries.len() != doc.keys.len() {
        return Err(FileProblem::NotSquare { at: at.to_string(), queries: doc.queries.len(), keys: doc.keys.len() });
    }
    Ok(())
}

/// Characters a token's label may have: a tokenizer's pieces are tens.
pub const MAX_LABEL_CHARS: usize = 1_000;

/// One side's tokens: labels as given (shortened like a model's), kinds as given or guessed.
fn side(
    at: &str,
    name: &str,
    labels: &[String],
    valid: Option<&Vec<bool>>,
    kinds: Option<&Vec<String>>,
) -> std::result::Result<Row, FileProblem> {
    let n = labels.len();
    let valid = valid.cloned().unwrap_or_else(|| vec![true; n]);
    let lengths = [("valid", Some(valid.len())), ("kinds", kinds.map(Vec::len))];
    if let Some((what, Some(got))) = lengths.into_iter().find(|(_, len)| len.is_some_and(|len| len != n)) {
        return Err(FileProblem::WrongShape { name: format!("{at}.{name}_{what}"), got: vec![got], expected: vec![n] });
    }
    let mut tokens = Vec::with_capacity(n);
    for (i, label) in labels.iter().enumerate() {
        let count = label.chars().count();
        if count > MAX_LABEL_CHARS {
            let (at, what) = (format!("{at}.{name}[{i}]"), "characters in a token".into());
            return Err(FileProblem::TooMany { at, what, count, max: MAX_LABEL_CHARS });
        }
        let kind = match kinds.map(|k| k[i].as_str()) {
            Some(k) => kind_named(k).ok_or_else(|| FileProblem::WrongType {
                field: format!("{at}.{name}_kinds[{i}]"),
                expected: "word, continuation, part, special, unknown or pad".into(),
            })?,
            None => guess_kind(label, valid[i]),
        };
        let text = if matches!(kind, TokenKind::Special | TokenKind::Pad) { String::new() } else { label.clone() };
        tokens.push(Token { label: short_label(label), piece: label.clone(), kind, text, part: None });
    }
    Ok(Row { ids: Vec::new(), tokens, valid })
}

fn kind_named(name: &str) -> Option<TokenKind> {
    use TokenKind::*;
    [Word, Continuation, Part, Special, Unknown, Pad].into_iter().find(|k| k.name() == name)
}

/// A token's kind from its label alone: `[CLS]`, `<s>`, `<|endoftext|>` are special, `##ing`
/// a later piece of a word, `[UNK]`/`<unk>` unknown.
pub(crate) fn guess_kind(label: &str, valid: bool) -> TokenKind {
    let bracketed = |open: &str, close: &str| {
        label.len() > open.len() + close.len()
            && label.len() <= 24
            && label.starts_with(open)
            && label.ends_with(close)
            && !label.contains(char::is_whitespace)
    };
    if !valid {
        TokenKind::Pad
    } else if matches!(label, "[UNK]" | "<unk>" | "<UNK>") {
        TokenKind::Unknown
    } else if bracketed("[", "]") || bracketed("<", ">") {
        TokenKind::Special
    } else if label.starts_with("##") && label.len() > 2 {
        TokenKind::Continuation
    } else {
        TokenKind::Word
    }
}

/// A row of the file: its tokens, and every layer's weights checked against its mask.
pub(super) fn build_row(
    at: &str,
    doc: &DocumentPlace,
    mask: MaskKind,
    weights: Layers,
    tolerance: f32,
) -> std::result::Result<RowAttention, FileProblem> {
    let queries = side(at, "query", &doc.queries, doc.query_valid.as_ref(), doc.query_kinds.as_ref())?;
    let keys = side(at, "key", &doc.keys, doc.key_valid.as_ref(), doc.key_kinds.as_ref())?;
    let built = mask.build(&queries.valid, &keys.valid).map_err(|_| FileProblem::WrongType {
        field: format!("{at}.mask"),
        expected: "a mask these tokens allow (causal needs as many queries as keys)".into(),
    })?;
    let built = Arc::new(built);
    let heads = weights.first().map_or(0, |w| w.len_of(Axis(0)));
    for (l, layer) in weights.iter().enumerate() {
        check_layer(at, (mask, &built), &queries.valid, (l, layer), tolerance)?;
    }
    let layers = weights.into_iter().map(|w| (w, Arc::clone(&built))).collect();
    Ok(RowAttention::from_weights(&queries, &keys, heads, layers))
}

/// Every weight finite and in 0..=1, every row that may see a key summing to 1, nothing where
/// the mask hides a key. A row that may see no key, or of a PAD query, is all zeros or sums to
/// 1 (transformers spreads a row that sees nothing evenly: its masked cells are not checked).
/// One pass over contiguous rows: a 12 × 12 × 512 × 512 file is 37.7 M weights.
fn check_layer(
    at: &str,
    (kind, mask): (MaskKind, &crate::Mask),
    query_valid: &[bool],
    (layer, w): (usize, &Array3<f32>),
    tolerance: f32,
) -> std::result::Result<(), FileProblem> {
    let (_, tq, tk) = w.dim();
    let allowed: Vec<bool> = mask.allowed().iter().copied().collect(); // (Tq, Tk), row-major
    let sees: Vec<bool> = allowed.chunks_exact(tk).map(|r| r.iter().any(|&a| a)).collect();
    let hides: Vec<bool> = allowed.chunks_exact(tk).map(|r| r.iter().any(|&a| !a)).collect();
    let values = w.as_slice().ok_or(FileProblem::NotSafetensors)?; // (H, Tq, Tk), built row-major
    let limit = 1.0 + tolerance;
    for (r, row) in values.chunks_exact(tk).enumerate() {
        let (head, query) = (r / tq, r % tq);
        let mut sum = 0.0f64;
        let mut outside = false;
        for &v in row {
            sum += f64::from(v);
            outside |= !(0.0..=limit).contains(&v); // NaN too
        }
        if outside {
            let (key, &value) = row.iter().enumerate().find(|&(_, v)| !(0.0..=limit).contains(v)).unwrap_or((0, &0.0));
            return Err(if value.is_finite() {
                FileProblem::WeightOutOfRange { at: at.to_string(), value, layer, head, query, key }
            } else {
                FileProblem::NonFiniteWeight { at: at.to_string(), layer, head, query, key }
            });
        }
        let near = |target: f64| (sum - target).abs() <= f64::from(tolerance);
        let may_be_empty = !sees[query] || !query_valid[query];
        if !(near(1.0) || may_be_empty && near(0.0)) {
            return Err(FileProblem::RowSum { at: at.to_string(), sum: sum as f32, layer, head, query });
        }
        // what the mask hides holds nothing: all of it together, not only each cell
        if sees[query] && hides[query] && !near(0.0) {
            let cells = &allowed[query * tk..(query + 1) * tk];
            let hidden = row.iter().enumerate().filter(|&(j, _)| !cells[j]);
            let leaked: f32 = hidden.clone().map(|(_, v)| v).sum();
            if leaked > tolerance {
                let (key, &value) = hidden.max_by(|a, b| a.1.total_cmp(b.1)).unwrap_or((0, &0.0));
                let mask = kind.name().into();
                return Err(FileProblem::MaskedWeight { at: at.to_string(), mask, value, layer, head, query, key });
            }
        }
    }
    Ok(())
}
