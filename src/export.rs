//! A run as a file: JSON (every place, row, layer and head, with tokens and masks) and CSV
//! (one line per weight). The command line writes these, and the page saves the same thing.
//!
//! ```json
//! { "format": "headmap.attention", "version": 1, "model_type": "bert",
//!   "rows": [ { "attention": {
//!       "encoder_self": { "mask": "padding", "what_if": false,
//!                         "queries": ["[CLS]", "…"], "keys": ["[CLS]", "…"],
//!                         "query_valid": [true, "…"], "key_valid": [true, "…", false],
//!                         "query_kinds": ["special", "…"], "key_kinds": ["special", "…", "pad"],
//!                         "weights": [[[[0.12, "…"]]]] } } } ] }
//! ```
//! `weights` is `[layers][heads][Tq][Tk]`; labels are the tokens as the page shows them. The
//! schema is `docs/attention.schema.json`; [`crate::import`] reads it back, and the same
//! document without `weights` is the metadata of the safetensors form ([`safetensors`]).

use std::fmt::Write;

use ndarray::{ArrayView, Axis, IxDyn};
use serde::ser::{Serialize, SerializeSeq, Serializer};

use crate::attention::place::Place;
use crate::run::{RowAttention, Run};

/// The JSON document of a run.
#[derive(serde::Serialize)]
pub struct Export<'a> {
    pub format: &'static str,
    pub version: u32,
    pub model_type: &'a str,
    pub rows: Vec<ExportRow<'a>>,
}

#[derive(serde::Serialize)]
pub struct ExportRow<'a> {
    /// By place name, a JSON object whose keys come in the names' order (`cross`,
    /// `decoder_self`, `encoder_self`). A list, not a `BTreeMap`: three keys at most, and the
    /// map with the sort it brings was the largest thing in the toy wasm that a list does.
    #[serde(serialize_with = "as_map")]
    pub attention: Vec<(&'static str, ExportPlace<'a>)>,
}

/// The places in their names' order, the order of an export's keys.
const BY_NAME: [Place; 3] = [Place::Cross, Place::DecoderSelf, Place::EncoderSelf];

fn as_map<S: Serializer>(entries: &[(&'static str, ExportPlace<'_>)], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_map(entries.iter().map(|(name, place)| (name, place)))
}

#[derive(serde::Serialize)]
pub struct ExportPlace<'a> {
    pub mask: &'static str,
    pub what_if: bool,
    pub queries: Vec<&'a str>,
    pub keys: Vec<&'a str>,
    pub query_valid: &'a [bool],
    pub key_valid: &'a [bool],
    pub query_kinds: Vec<&'static str>,
    pub key_kinds: Vec<&'static str>,
    /// `[layers][heads][Tq][Tk]`; none in the safetensors form's metadata.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<Layers<'a>>,
}

/// A row's weights serialized layer by layer, each computed (or read) only while it is written.
pub struct Layers<'a>(pub &'a RowAttention);

impl Serialize for Layers<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.layers()))?;
        for layer in 0..self.0.layers() {
            let w = self.0.layer(layer).map_err(serde::ser::Error::custom)?; // (H, Tq, Tk)
            seq.serialize_element(&Nested(w.view().into_dyn()))?;
        }
        seq.end()
    }
}

/// An array serialized as nested lists, without copying it.
pub struct Nested<'a>(pub ArrayView<'a, f32, IxDyn>);

impl Serialize for Nested<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0.ndim() == 0 {
            return serializer.serialize_f32(self.0.first().copied().unwrap_or(0.0));
        }
        let mut seq = serializer.serialize_seq(Some(self.0.len_of(Axis(0))))?;
        for sub in self.0.axis_iter(Axis(0)) {
            seq.serialize_element(&Nested(sub))?;
        }
        seq.end()
    }
}

fn labels(row: &[crate::tokenize::Token]) -> Vec<&str> {
    row.iter().map(|t| t.label.as_str()).collect()
}

fn kinds(row: &[crate::tokenize::Token]) -> Vec<&'static str> {
    row.iter().map(|t| t.kind.name()).collect()
}

/// The JSON document of `run`, made by a model of type `model_type`.
pub fn export<'a>(model_type: &'a str, run: &'a Run) -> Export<'a> {
    let rows = (0..run.batch())
        .map(|b| ExportRow {
            attention: BY_NAME
                .iter()
                .filter_map(|&name| run.places.iter().find(|p| p.place == name))
                .filter_map(|p| p.rows.get(b).map(|row| (p, row)))
                .map(|(p, row): (_, &RowAttention)| {
                    let place = ExportPlace {
                        mask: p.mask.name(),
                        what_if: p.what_if,
                        queries: labels(&row.queries),
                        keys: labels(&row.keys),
                        query_valid: &row.query_valid,
                        key_valid: &row.key_valid,
                        query_kinds: kinds(&row.queries),
                        key_kinds: kinds(&row.keys),
                        weights: Some(Layers(row)),
                    };
                    (p.place.name(), place)
                })
                .collect(),
        })
        .collect();
    Export { format: "headmap.attention", version: 1, model_type, rows }
}

/// How the safetensors form stores each weight.
#[cfg(feature = "hf")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precision {
    F32,
    /// Half the bytes; each weight within 2⁻¹¹ of itself (rows still sum to 1 within 1e-3).
    F16,
}

/// `run` as a safetensors file: a tensor `rows.<row>.<place>` (L, H, Tq, Tk) per batch row
/// and place, and the JSON document without weights in the metadata under `headmap`.
#[cfg(feature = "hf")]
pub fn safetensors(model_type: &str, run: &Run, precision: Precision) -> crate::error::Result<Vec<u8>> {
    use safetensors::tensor::{Dtype, TensorView};
    let mut doc = export(model_type, run);
    let mut tensors = Vec::new();
    for (b, row) in doc.rows.iter_mut().enumerate() {
        for (name, place) in row.attention.iter_mut() {
            let Some(Layers(attention)) = place.weights.take() else { continue };
            let w = attention.weights()?; // (L, H, Tq, Tk), refused past MAX_WEIGHT_BYTES
            let shape = w.shape().to_vec();
            let values = w.as_standard_layout();
            let values = values.as_slice().unwrap_or(&[]);
            let bytes: Vec<u8> = match precision {
                Precision::F32 => values.iter().flat_map(|v| v.to_le_bytes()).collect(),
                Precision::F16 => values.iter().flat_map(|&v| half::f16::from_f32(v).to_le_bytes()).collect(),
            };
            tensors.push((format!("rows.{b}.{name}"), shape, bytes));
        }
    }
    let dtype = if precision == Precision::F16 { Dtype::F16 } else { Dtype::F32 };
    let views = tensors
        .iter()
        .map(|(name, shape, bytes)| {
            let view = TensorView::new(dtype, shape.clone(), bytes).map_err(|e| written(&e))?;
            Ok((name.clone(), view))
        })
        .collect::<crate::error::Result<Vec<_>>>()?;
    let metadata = serde_json::to_string(&doc).map_err(|e| written(&e))?;
    let metadata = std::collections::HashMap::from([("headmap".to_string(), metadata)]);
    safetensors::serialize(views, Some(metadata)).map_err(|e| written(&e))
}

#[cfg(feature = "hf")]
fn written(e: &dyn std::fmt::Display) -> crate::error::Error {
    crate::error::Error::Write { reason: e.to_string() }
}

/// One line per weight: `row,attention,layer,head,query_index,query,key_index,key,weight`.
pub fn csv(run: &Run) -> crate::error::Result<String> {
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut out = String::from("row,attention,layer,head,query_index,query,key_index,key,weight\n");
    for p in &run.places {
        for (b, row) in p.rows.iter().enumerate() {
            let queries: Vec<String> = row.queries.iter().map(|t| quote(&t.label)).collect();
            let keys: Vec<String> = row.keys.iter().map(|t| quote(&t.label)).collect();
            for l in 0..row.layers() {
                for ((h, i, j), w) in row.layer(l)?.indexed_iter() {
                    let _ = writeln!(out, "{b},{},{l},{h},{i},{},{j},{},{w}", p.place.name(), queries[i], keys[j]);
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::toy::ToyConfig;
    use crate::models::Model;
    use crate::run::Request;

    #[test]
    fn json_and_csv_hold_every_weight_of_every_place() {
        let model = Model::toy(ToyConfig::small(1)).unwrap();
        let request = Request { texts: vec!["a b c d e".into(), "d \"e\"".into()], ..Request::default() };
        let run = model.run(&request).unwrap();
        let doc = serde_json::to_value(export("toy", &run)).unwrap();
        let place = &doc["rows"][1]["attention"]["encoder_self"];
        assert_eq!(place["mask"], "padding");
        assert_eq!(place["key_valid"], serde_json::json!([true, true, true, true, false]));
        let w = &place["weights"];
        assert_eq!((w.as_array().unwrap().len(), w[0].as_array().unwrap().len()), (2, 4), "layers, heads");
        let got = w[1][3][2][0].as_f64().unwrap() as f32;
        assert_eq!(got, run.places[0].rows[1].weights().unwrap()[[1, 3, 2, 0]]);
        assert_eq!(doc["rows"][0]["attention"].as_object().unwrap().len(), 3, "the toy has all three places");
        let csv = csv(&run).unwrap();
        let lines = csv.lines().count() - 1;
        let per_place: usize =
            run.places.iter().map(|p| p.rows.iter().map(|r| r.weights().unwrap().len()).sum::<usize>()).sum();
        assert_eq!(lines, per_place);
        assert!(csv.contains(r#",3,"""",2,"e","#), "a quote token is quoted and doubled");
    }
}
