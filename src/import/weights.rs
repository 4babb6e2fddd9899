//! A place's weights as the file holds them — JSON's nested lists or a safetensors tensor —
//! read into one (H, Tq, Tk) array of f32 per layer, every length checked on the way.

use std::sync::OnceLock;

use ndarray::Array3;
use safetensors::{Dtype, SafeTensors};

use super::document::{DocumentPlace, Nested};
use super::{BF16_ROW_SUM_TOLERANCE, ROW_SUM_TOLERANCE};
use crate::error::FileProblem;
use crate::run::MAX_WEIGHT_BYTES;

fn mismatch(at: &str, side: &str, tokens: usize, size: usize) -> FileProblem {
    FileProblem::TokensMismatch { at: at.to_string(), side: side.to_string(), tokens, size }
}

/// Every layer's weights, (H, Tq, Tk) each: what a row keeps, converted once.
pub(super) type Layers = Vec<Array3<f32>>;

/// A place's tokens must be there for weights to be over them (and a chunk of none is no chunk).
pub(super) fn check_tokens(at: &str, doc: &DocumentPlace) -> std::result::Result<(usize, usize), FileProblem> {
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
pub(super) fn nested(
    at: &str,
    weights: Option<&Nested>,
    doc: &DocumentPlace,
) -> std::result::Result<Layers, FileProblem> {
    let weights = weights.ok_or(FileProblem::MissingField { at: format!("{at}.weights") })?;
    let (tq, tk) = check_tokens(at, doc)?;
    let layers = weights.len();
    let heads = weights.first().map_or(0, Vec::len);
    check_heads(at, layers, heads)?;
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

/// Tensor `name` of the safetensors file, layer by layer as f32, and how far its rows may sum
/// from 1; refused before it is converted when it would take the run's weights past what a page
/// keeps (`before` are kept already). Half floats go through a table of all 65,536 values: a
/// lookup, where converting each one is a dozen operations in wasm.
pub(super) fn tensor(
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
    check_heads(name, shape[0], shape[1])?;
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

/// Heads a place may have, layers × heads: a grid of that many thumbnails is what a page draws
/// (models go to about 10,000: GPT-3's 96 × 96). A small file declaring 4,096 × 64 made the
/// page build 262,144.
pub const MAX_HEADS: usize = 16_384;

/// Not more heads than [`MAX_HEADS`] at place `at`.
pub(super) fn check_heads(at: &str, layers: usize, heads: usize) -> std::result::Result<(), FileProblem> {
    let count = layers.saturating_mul(heads);
    if count > MAX_HEADS {
        return Err(FileProblem::TooMany {
            at: at.to_string(),
            what: "heads (layers × heads)".into(),
            count,
            max: MAX_HEADS,
        });
    }
    Ok(())
}
