//! The document of an attention file, as `docs/attention.schema.json` describes it: headmap's
//! JSON whole, or a safetensors file's `headmap` metadata (the same without its `weights`).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::FileProblem;

/// The document, with or without its weights (the safetensors metadata has none).
#[derive(Deserialize)]
pub(super) struct Document {
    #[serde(default)]
    pub format: Option<String>,
    #[serde(default)]
    pub version: Option<u32>,
    #[serde(default)]
    pub model_type: Option<String>,
    pub rows: Vec<DocumentRow>,
}

#[derive(Deserialize)]
pub(super) struct DocumentRow {
    pub attention: BTreeMap<String, DocumentPlace>,
}

pub(super) type Nested = Vec<Vec<Vec<Vec<Option<f32>>>>>;

#[derive(Deserialize)]
pub(super) struct DocumentPlace {
    #[serde(default)]
    pub mask: Option<String>,
    #[serde(default)]
    pub what_if: bool,
    pub queries: Vec<String>,
    pub keys: Vec<String>,
    #[serde(default)]
    pub query_valid: Option<Vec<bool>>,
    #[serde(default)]
    pub key_valid: Option<Vec<bool>>,
    #[serde(default)]
    pub query_kinds: Option<Vec<String>>,
    #[serde(default)]
    pub key_kinds: Option<Vec<String>>,
    /// `[layers][heads][Tq][Tk]`; null where the writer had NaN.
    #[serde(default)]
    pub weights: Option<Nested>,
}

pub(super) fn parse_json(bytes: &[u8]) -> std::result::Result<Document, FileProblem> {
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
