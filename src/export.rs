//! A run as a file: JSON (every place, row, layer and head, with tokens and masks) and CSV
//! (one line per weight). The command line writes these, and the page saves the same thing.
//!
//! ```json
//! { "model_type": "bert",
//!   "rows": [ { "attention": {
//!       "encoder_self": { "mask": "padding", "what_if": false,
//!                         "queries": ["[CLS]", "…"], "keys": ["[CLS]", "…"],
//!                         "query_valid": [true, "…"], "key_valid": [true, "…", false],
//!                         "weights": [[[[0.12, "…"]]]] } } } ] }
//! ```
//! `weights` is `[layers][heads][Tq][Tk]`; labels are the tokens as the page shows them.

use std::collections::BTreeMap;
use std::fmt::Write;

use ndarray::{ArrayView, Axis, IxDyn};
use serde::ser::{Serialize, SerializeSeq, Serializer};

use crate::models::run::{RowAttention, Run};

/// The JSON document of a run.
#[derive(serde::Serialize)]
pub struct Export<'a> {
    pub model_type: &'a str,
    pub rows: Vec<ExportRow<'a>>,
}

#[derive(serde::Serialize)]
pub struct ExportRow<'a> {
    /// By place name: `encoder_self`, `decoder_self`, `cross`.
    pub attention: BTreeMap<&'static str, ExportPlace<'a>>,
}

#[derive(serde::Serialize)]
pub struct ExportPlace<'a> {
    pub mask: &'static str,
    pub what_if: bool,
    pub queries: Vec<&'a str>,
    pub keys: Vec<&'a str>,
    pub query_valid: &'a [bool],
    pub key_valid: &'a [bool],
    /// `[layers][heads][Tq][Tk]`.
    pub weights: Layers<'a>,
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

/// The JSON document of `run`, made by a model of type `model_type`.
pub fn export<'a>(model_type: &'a str, run: &'a Run) -> Export<'a> {
    let rows = (0..run.batch())
        .map(|b| ExportRow {
            attention: run
                .places
                .iter()
                .filter_map(|p| p.rows.get(b).map(|row| (p, row)))
                .map(|(p, row): (_, &RowAttention)| {
                    let place = ExportPlace {
                        mask: p.mask.name(),
                        what_if: p.what_if,
                        queries: labels(&row.queries),
                        keys: labels(&row.keys),
                        query_valid: &row.query_valid,
                        key_valid: &row.key_valid,
                        weights: Layers(row),
                    };
                    (p.place.name(), place)
                })
                .collect(),
        })
        .collect();
    Export { model_type, rows }
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
    use crate::models::run::Request;
    use crate::models::toy::ToyConfig;
    use crate::models::Model;

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
