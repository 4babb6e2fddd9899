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
//!
//! Here is the door (size, kind of file, version, every row holding the same places); the
//! document's fields are in `document.rs`, reading a place's weights in `weights.rs`, and a
//! row's tokens and checks in `checks.rs`.

use std::collections::BTreeMap;

use ndarray::Array3;
use safetensors::SafeTensors;

use crate::attention::mask::MaskKind;
use crate::attention::place::Place;
use crate::error::{Error, FileProblem, Result};
use crate::run::{check_size, PlaceRun, RowAttention, Run};
use crate::tokenize::short_label;

mod checks;
mod document;
mod weights;

use checks::{build_row, check_sides};
use document::parse_json;
use weights::{nested, tensor};

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
    Ok(Imported { model_type, run: Run { places: places.collect(), hidden: Vec::new(), ..Run::default() } })
}

/// A safetensors file starts with the length of its JSON header (8 bytes, little-endian), then
/// the header's `{`: told apart from JSON by that, not by a first `{`, which a header length
/// can also begin with.
fn looks_like_safetensors(bytes: &[u8]) -> bool {
    let Some((length, rest)) = bytes.split_first_chunk::<8>() else { return false };
    let length = u64::from_le_bytes(*length);
    length <= rest.len() as u64 && rest.first() == Some(&b'{')
}

#[cfg(test)]
mod tests;
