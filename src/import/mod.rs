//! Attention computed elsewhere — by `headmap attention`, a notebook, another tool — read back
//! into a [`Run`] with no model behind it, so every view that needs only weights and tokens
//! draws it as it draws a run of its own.
//!
//! Two files, one document (`docs/attention.schema.json`):
//! - headmap's JSON, as `headmap attention --format json` and the page's saving write it
//!   (see [`crate::export`]);
//! - a safetensors file: per batch row and place a tensor `rows.<row>.<place>`, `[L, H, Tq,
//!   Tk]`, f32, f16 or bf16, and in its metadata, under `headmap`, the same JSON document
//!   without its `weights`.
//!
//! Nothing is trusted: the shapes must match the tokens, every weight must be finite and in
//! 0..=1, every query that may see a key must spread exactly its whole weight (a row sums to 1
//! within [`ROW_SUM_TOLERANCE`]), and no weight may sit where the place's mask hides the key.
//! Each refusal is a [`FileProblem`] that says where.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use ndarray::{Array3, Axis};
use safetensors::{Dtype, SafeTensors};
use serde::Deserialize;

use crate::attention::mask::MaskKind;
use crate::attention::place::Place;
use crate::error::{Error, FileProblem, Result};
use crate::models::run::{check_size, PlaceRun, Row, RowAttention, Run, MAX_WEIGHT_BYTES};
use crate::tokenize::{short_label, Token, TokenKind};

/// The largest file a page opens: a 12 × 12 × 512 × 512 run is 75 MB in f16, 151 MB in f32.
pub const MAX_FILE_BYTES: usize = 512 << 20;

/// The largest JSON file: its numbers parse into nested lists first, so JSON is for small runs
/// (12 × 12 × 128 tokens is about 25 MB of it); safetensors is for large ones.
pub const MAX_JSON_BYTES: usize = 64 << 20;

/// How far from 1 the weights of a query may sum (f16 rounds each weight by up to 2⁻¹¹ of it).
pub const ROW_SUM_TOLERANCE: f32 = 1e-3;

/// The same for bf16 weights, which round by up to 2⁻⁹ of each: a bf16 model's own attention
/// sums to 1 only within about 2e-3.
pub const BF16_ROW_SUM_TOLERANCE: f32 = 4e-3;

/// The most tokens a side and rows a file may have: far past what a page draws, and a bound on
/// what a small file can make the reader build.
pub const MAX_TOKENS: usize = 8192;
pub const MAX_ROWS: usize = 64;

/// What the document calls itself (`format`); the version this reader knows.
pub const FORMAT: &str = "headmap.attention";
pub const VERSION: u32 = 1;

/// A run read from a file, and the model type the file names (free text: a label only).
pub struct Imported {
    pub model_type: String,
    pub run: Run,
}

/// The document, with or without its weights (the safetensors metadata has none).
#[derive(Deserialize)]
struct Document {
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    version: Option<u32>,
    #[serde(default)]
    model_type: Option<String>,
    rows: Vec<DocumentRow>,
}

#[derive(Deserialize)]
struct DocumentRow {
    attention: BTreeMap<String, DocumentPlace>,
}

type Nested = Vec<Vec<Vec<Vec<Option<f32>>>>>;

#[derive(Deserialize)]
struct DocumentPlace {
    #[serde(default)]
    mask: Option<String>,
    #[serde(default)]
    what_if: bool,
    queries: Vec<String>,
    keys: Vec<String>,
    #[serde(default)]
    query_valid: Option<Vec<bool>>,
    #[serde(default)]
    key_valid: Option<Vec<bool>>,
    #[serde(default)]
    query_kinds: Option<Vec<String>>,
    #[serde(default)]
    key_kinds: Option<Vec<String>>,
    /// `[layers][heads][Tq][Tk]`; null where the writer had NaN.
    #[serde(default)]
    weights: Option<Nested>,
}

/// Reads `bytes`, headmap's JSON or a safetensors file (told apart by their first bytes);
/// `file` names it in errors.
pub fn read(file: &str, bytes: &[u8]) -> Result<Imported> {
    let problem = |p| Error::file(file, p);
    if bytes.len() > MAX_FILE_BYTES {
        return Err(problem(FileProblem::TooLarge { megabytes: bytes.len() >> 20, max: MAX_FILE_BYTES >> 20 }));
    }
    let (document, tensors) = if looks_like_safetensors(bytes) {
        let st = SafeTensors::deserialize(bytes).map_err(|_| problem(FileProblem::NotSafetensors))?;
        let (_, metadata) = SafeTensors::read_metadata(bytes).map_err(|_| problem(FileProblem::NotSafetensors))?;
        let text =
            metadata.metadata().as_ref().and_then(|m| m.get("headmap")).ok_or(problem(FileProblem::NotAttention))?;
        (parse_json(text.as_bytes()).map_err(problem)?, Some(st))
    } else if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
        if bytes.len() > MAX_JSON_BYTES {
            return Err(problem(FileProblem::TooLarge { megabytes: bytes.len() >> 20, max: MAX_JSON_BYTES >> 20 }));
        }
        (parse_json(bytes).map_err(problem)?, None)
    } else {
        return Err(problem(FileProblem::NotAttention));
    };
    if document.format.as_deref().is_some_and(|f| f != FORMAT) || document.version.is_some_and(|v| v > VERSION) {
        return Err(problem(FileProblem::NotAttention));
    }
    if document.rows.len() > MAX_ROWS {
        return Err(problem(FileProblem::TooMany {
            at: "rows".into(),
            what: "rows".into(),
            count: document.rows.len(),
            max: MAX_ROWS,
        }));
    }
    // per place: its mask, whether it is a what-if, and its rows
    let mut places: BTreeMap<Place, (MaskKind, bool, Vec<RowAttention>)> = BTreeMap::new();
    let mut names: Option<Vec<String>> = None; // row 0's places: every row has the same
    let mut total = 0usize;
    for (r, row) in document.rows.into_iter().enumerate() {
        let these: Vec<String> = row.attention.keys().cloned().collect();
        let first = names.get_or_insert_with(|| these.clone());
        if let Some(missing) = first
            .iter()
            .find(|n| !these.contains(n))
            .map(|n| (r, n))
            .or_else(|| these.iter().find(|n| !first.contains(n)).map(|n| (0, n)))
        {
            return Err(problem(FileProblem::MissingField {
                at: format!("rows[{}].attention.{}", missing.0, missing.1),
            }));
        }
        for (name, doc) in row.attention {
            let at = format!("rows[{r}].attention.{name}");
            let wrong =
                |field: String, expected: &str| problem(FileProblem::WrongType { field, expected: expected.into() });
            let place = Place::parse(&name).map_err(|_| wrong(at.clone(), "encoder_self, decoder_self or cross"))?;
            let mask = match &doc.mask {
                Some(m) => {
                    MaskKind::parse(m).map_err(|_| wrong(format!("{at}.mask"), "padding, causal, cross or none"))?
                }
                None => MaskKind::None,
            };
            check_sides(&at, place, &doc).map_err(problem)?;
            let (weights, tolerance) = match &tensors {
                None => (nested(&at, doc.weights.as_ref(), &doc).map_err(problem)?, ROW_SUM_TOLERANCE),
                Some(st) => tensor(st, &format!("rows.{r}.{name}"), &doc, total).map_err(problem)?,
            };
            total = total.saturating_add(weights.iter().map(Array3::len).sum());
            check_size(total)?;
            let row = build_row(&at, &doc, mask, weights, tolerance).map_err(problem)?;
            let (kept_mask, _, rows) = places.entry(place).or_insert_with(|| (mask, doc.what_if, Vec::new()));
            if *kept_mask != mask {
                return Err(wrong(format!("{at}.mask"), kept_mask.name()));
            }
            let shape = |r: &RowAttention| vec![r.layers(), r.heads(), r.size().0, r.size().1];
            if let Some(first) = rows.first().filter(|first| shape(first) != shape(&row)) {
                return Err(problem(FileProblem::WrongShape { name: at, got: shape(&row), expected: shape(first) }));
            }
            rows.push(row);
        }
    }
    if places.is_empty() {
        return Err(problem(FileProblem::MissingField { at: "rows[0].attention".into() }));
    }
    let places =
        places.into_iter().map(|(place, (mask, what_if, rows))| PlaceRun::from_rows(place, mask, what_if, rows));
    let model_type = short_label(document.model_type.as_deref().unwrap_or("unknown"));
    Ok(Imported { model_type, run: Run { places: places.collect(), hidden: Vec::new() } })
}

/// A safetensors file starts with the length of its JSON header (8 bytes, little-endian), then
/// the header's `{`: told apart from JSON by that, not by a first `{`, which a header length
/// can also begin with.
fn looks_like_safetensors(bytes: &[u8]) -> bool {
    let Some((length, rest)) = bytes.split_first_chunk::<8>() else { return false };
    let length = u64::from_le_bytes(*length);
    length <= rest.len() as u64 && rest.first() == Some(&b'{')
}

/// Tokens on both sides, not too many, and as many on each side of a self-attention place.
fn check_sides(at: &str, place: Place, doc: &DocumentPlace) -> std::result::Result<(), FileProblem> {
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

fn parse_json(bytes: &[u8]) -> std::result::Result<Document, FileProblem> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let at = e.path().to_string();
        let inner = e.into_inner();
        if inner.is_syntax() || inner.is_eof() {
            FileProblem::NotJson { line: inner.line(), column: inner.column() }
        } else if inner.to_string().starts_with("missing field") {
            let field = inner.to_string().split('`').nth(1).unwrap_or("?").to_string();
            FileProblem::MissingField { at: if at == "." { field } else { format!("{at}.{field}") } }
        } else {
            FileProblem::WrongType { field: at, expected: "what docs/attention.schema.json describes".into() }
        }
    })
}

fn mismatch(at: &str, side: &str, tokens: usize, size: usize) -> FileProblem {
    FileProblem::TokensMismatch { at: at.to_string(), side: side.to_string(), tokens, size }
}

/// Every layer's weights, (H, Tq, Tk) each: what a row keeps, converted once.
type Layers = Vec<Array3<f32>>;

/// A place's tokens must be there for weights to be over them (and a chunk of none is no chunk).
fn check_tokens(at: &str, doc: &DocumentPlace) -> std::result::Result<(usize, usize), FileProblem> {
    let (tq, tk) = (doc.queries.len(), doc.keys.len());
    if tq == 0 || tk == 0 {
        return Err(FileProblem::WrongShape {
            name: format!("{at}.queries, keys"),
            got: vec![tq, tk],
            expected: vec![tq.max(1), tk.max(1)],
        });
    }
    Ok((tq, tk))
}

/// The JSON's nested weights, layer by layer, every length checked.
fn nested(at: &str, weights: Option<&Nested>, doc: &DocumentPlace) -> std::result::Result<Layers, FileProblem> {
    let weights = weights.ok_or(FileProblem::MissingField { at: format!("{at}.weights") })?;
    let (tq, tk) = check_tokens(at, doc)?;
    let layers = weights.len();
    let heads = weights.first().map_or(0, Vec::len);
    if layers == 0 {
        return Err(FileProblem::WrongShape {
            name: format!("{at}.weights"),
            got: vec![0],
            expected: vec![1, 1, tq, tk],
        });
    }
    let mut out = Vec::with_capacity(layers);
    for (l, layer) in weights.iter().enumerate() {
        if layer.len() != heads || heads == 0 {
            let got = vec![layers, layer.len(), tq, tk];
            return Err(FileProblem::WrongShape {
                name: format!("{at}.weights[{l}]"),
                got,
                expected: vec![layers, heads.max(1), tq, tk],
            });
        }
        let mut flat = Vec::with_capacity(heads * tq * tk);
        for (h, head) in layer.iter().enumerate() {
            if head.len() != tq {
                return Err(mismatch(&format!("{at}.weights[{l}][{h}]"), "query", tq, head.len()));
            }
            for (i, row) in head.iter().enumerate() {
                if row.len() != tk {
                    return Err(mismatch(&format!("{at}.weights[{l}][{h}][{i}]"), "key", tk, row.len()));
                }
                for (j, w) in row.iter().enumerate() {
                    let non_finite = || FileProblem::NonFiniteWeight {
                        at: format!("{at}.weights"),
                        layer: l,
                        head: h,
                        query: i,
                        key: j,
                    };
                    flat.push(w.filter(|w| w.is_finite()).ok_or_else(non_finite)?);
                }
            }
        }
        out.push(
            Array3::from_shape_vec((heads, tq, tk), flat)
                .map_err(|_| FileProblem::MissingField { at: format!("{at}.weights") })?,
        );
    }
    Ok(out)
}

/// Tensor `name` of the safetensors file, layer by layer as f32. Half floats go through a table
/// of all 65,536 values: a lookup, where converting each one is a dozen operations in wasm.
/// Tensor `name` as f32, and how far its rows may sum from 1; refused before it is converted
/// when it would take the run's weights past what a page keeps (`before` are kept already).
fn tensor(
    st: &SafeTensors<'_>,
    name: &str,
    doc: &DocumentPlace,
    before: usize,
) -> std::result::Result<(Layers, f32), FileProblem> {
    let view = st.tensor(name).map_err(|_| FileProblem::MissingTensor { name: name.to_string() })?;
    let (tq, tk) = check_tokens(name, doc)?;
    let shape = view.shape().to_vec();
    if shape.len() != 4 || shape[0] == 0 || shape[1] == 0 {
        let expected =
            vec![shape.first().copied().unwrap_or(1).max(1), shape.get(1).copied().unwrap_or(1).max(1), tq, tk];
        return Err(FileProblem::WrongShape { name: name.to_string(), got: shape, expected });
    }
    if shape[2] != tq {
        return Err(mismatch(name, "query", tq, shape[2]));
    }
    if shape[3] != tk {
        return Err(mismatch(name, "key", tk, shape[3]));
    }
    let bytes = shape.iter().fold(before, |n, &d| n.saturating_mul(d.max(1))).saturating_mul(4);
    if bytes > MAX_WEIGHT_BYTES {
        return Err(FileProblem::TooLarge { megabytes: bytes >> 20, max: MAX_WEIGHT_BYTES >> 20 });
    }
    static F16: OnceLock<Vec<f32>> = OnceLock::new();
    static BF16: OnceLock<Vec<f32>> = OnceLock::new();
    let halves = |to_f32: fn(u16) -> f32| (0..=u16::MAX).map(to_f32).collect::<Vec<f32>>();
    let (width, table, tolerance) = match view.dtype() {
        Dtype::F32 => (4, None, ROW_SUM_TOLERANCE),
        Dtype::F16 => (2, Some(F16.get_or_init(|| halves(|b| half::f16::from_bits(b).to_f32()))), ROW_SUM_TOLERANCE),
        Dtype::BF16 => {
            (2, Some(BF16.get_or_init(|| halves(|b| half::bf16::from_bits(b).to_f32()))), BF16_ROW_SUM_TOLERANCE)
        }
        other => {
            return Err(FileProblem::UnsupportedDtype {
                name: name.to_string(),
                dtype: format!("{other:?}").to_lowercase(),
            })
        }
    };
    let (layers, heads) = (shape[0], shape[1]);
    let per_layer = heads * tq * tk * width;
    let bytes = view.data(); // safetensors checked that it holds the shape's bytes
    if bytes.len() != layers * per_layer {
        return Err(FileProblem::NotSafetensors);
    }
    let layer = |chunk: &[u8]| {
        let values: Vec<f32> = match table {
            Some(table) => {
                chunk.chunks_exact(2).map(|b| table[usize::from(u16::from_le_bytes([b[0], b[1]]))]).collect()
            }
            None => chunk.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        };
        Array3::from_shape_vec((heads, tq, tk), values).map_err(|_| FileProblem::NotSafetensors)
    };
    Ok((bytes.chunks_exact(per_layer).map(layer).collect::<std::result::Result<_, _>>()?, tolerance))
}

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
fn build_row(
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

#[cfg(test)]
mod tests;
