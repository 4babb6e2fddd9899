//! What every Hugging Face family reads its `config.json` with: the parser that names the
//! setting it stumbles on, the checks of sizes and activations, token ids given as one number
//! or a list, and `Loading`, what a family's loader is handed. A leaf: it knows no family.

use std::sync::Arc;

use ndarray::Array2;
use serde::Deserialize;

use super::head::OutputHead;
use super::weights::Weights;
use crate::error::{Error, FileProblem, Result};
use crate::nn::Activation;

/// The largest size a config may give any dimension: beyond it a file is damaged or hostile,
/// and believing it would allocate without bound.
pub const MAX_SIZE: usize = 1 << 20;

/// A token id that configs give as one number or as a list (Llama 3's several `eos_token_id`s).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum TokenIds {
    One(u32),
    Many(Vec<u32>),
}

impl TokenIds {
    /// The one id, or the first of the list (0 for an empty list).
    pub fn first(&self) -> u32 {
        match self {
            TokenIds::One(id) => *id,
            TokenIds::Many(ids) => ids.first().copied().unwrap_or(0),
        }
    }
}

/// What a family's loader gets: the `model_type` it was chosen by, `config.json`, the weights
/// and how many ids the tokenizer can give.
pub(crate) struct Loading<'a> {
    pub model_type: &'a str,
    pub config: &'a [u8],
    pub weights: Weights<'a>,
    pub tokenizer_vocab: usize,
}

impl Loading<'_> {
    /// `config.json` as the family's `T`.
    pub fn config<T: for<'de> Deserialize<'de>>(&self) -> Result<T> {
        parse_config(self.config)
    }

    /// The padding id `pad`, once the tokenizer is known to fit the model's `vocab` and `pad`
    /// is inside it. Checked before any weight is read: a tokenizer that can give an id
    /// outside the model's table would fail later, on some text, with a worse message.
    pub fn pad(&self, vocab: usize, pad: u32) -> Result<u32> {
        if self.tokenizer_vocab > vocab {
            let problem = FileProblem::VocabularyTooLarge { tokenizer: self.tokenizer_vocab, model: vocab };
            return Err(Error::file("config.json", problem));
        }
        if pad as usize >= vocab {
            let problem = FileProblem::impossible("pad_token_id", pad, "it is outside the vocabulary");
            return Err(Error::file("config.json", problem));
        }
        Ok(pad)
    }

    /// A token id the config gives generation (`setting`: the token a decoder starts from, or
    /// the one its last step is forced to), refused by name when it is outside the `vocab`
    /// the output head scores: a crafted config would otherwise fail at the first token
    /// written, or index past the logits.
    pub fn token(&self, setting: &str, id: Option<u32>, vocab: usize) -> Result<Option<u32>> {
        match id {
            Some(id) if id as usize >= vocab => {
                let problem = FileProblem::impossible(setting, id, "it is outside the vocabulary");
                Err(Error::file("config.json", problem))
            }
            id => Ok(id),
        }
    }
}

/// `tie_word_embeddings` alone, for the families whose head it decides.
#[derive(Deserialize)]
struct Tying {
    tie_word_embeddings: Option<bool>,
}

/// A decoder's output head: its own matrix `name` (V, D) when the files carry it (read
/// outside any prefix, where task models keep it), else the token embeddings when `config`
/// ties them (`tie_word_embeddings`, else `tied_by_default`, as the family's transformers
/// config does); else what is missing, for the error a prediction gives.
pub(crate) fn decoder_head(
    config: &[u8],
    weights: &Weights,
    name: &str,
    tokens: &Arc<Array2<f32>>,
    tied_by_default: bool,
) -> Result<std::result::Result<OutputHead, String>> {
    if let Some(own) = weights.root_matrix(name, [tokens.nrows(), tokens.ncols()]) {
        return Ok(Ok(OutputHead::plain(Arc::new(own?))));
    }
    let tying: Tying = parse_config(config)?;
    Ok(match tying.tie_word_embeddings.unwrap_or(tied_by_default) {
        true => Ok(OutputHead::plain(Arc::clone(tokens))),
        false => Err(format!("`{name}`, and tie_word_embeddings is false")),
    })
}

/// The activation a config names under `setting`.
pub(crate) fn activation(setting: &str, name: &str) -> Result<Activation> {
    Activation::parse(name).ok_or_else(|| {
        let reason = format!("headmap knows {}", Activation::NAMES.join(", "));
        Error::file("config.json", FileProblem::unsupported(setting, name, &reason))
    })
}

/// Fails unless every size a config gives is at least 1 and believable.
pub(crate) fn check_sizes(sizes: &[(&str, usize)]) -> Result<()> {
    for &(setting, value) in sizes {
        if value == 0 {
            return Err(Error::file("config.json", FileProblem::impossible(setting, 0, "it must be at least 1")));
        }
        if value > MAX_SIZE {
            let reason = format!("no model has more than {MAX_SIZE}");
            return Err(Error::file("config.json", FileProblem::impossible(setting, value, &reason)));
        }
    }
    Ok(())
}

/// `config.json` as `T`, with an error a person can act on: where the JSON breaks, which
/// setting has the wrong type, or that the file is valid JSON of another kind than settings.
pub(crate) fn parse_config<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T> {
    if let Ok(doc) = serde_json::from_slice::<serde_json::Value>(bytes) {
        let found = match doc {
            serde_json::Value::Object(_) => None,
            serde_json::Value::Null => Some("null"),
            serde_json::Value::Array(_) => Some("a list"),
            serde_json::Value::Number(_) => Some("a number"),
            serde_json::Value::String(_) => Some("text"),
            serde_json::Value::Bool(_) => Some("true or false"),
        };
        if let Some(found) = found {
            return Err(Error::file("config.json", FileProblem::NotAnObject { found: found.to_string() }));
        }
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let parsed: std::result::Result<T, _> = serde_path_to_error::deserialize(&mut de);
    parsed.map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        let problem = match inner.classify() {
            serde_json::error::Category::Data if field != "." => {
                FileProblem::WrongType { field, expected: expected_kind(&inner.to_string()).to_string() }
            }
            _ => FileProblem::NotJson { line: inner.line(), column: inner.column() },
        };
        Error::file("config.json", problem)
    })
}

/// What serde's "invalid type: …, expected X" wanted, in words.
fn expected_kind(message: &str) -> &'static str {
    let expected = message.split("expected ").nth(1).unwrap_or("");
    if ["usize", "u32", "u64", "i64", "integer"].iter().any(|t| expected.starts_with(t)) {
        "a whole number"
    } else if expected.starts_with("f64") || expected.starts_with("f32") {
        "a number"
    } else if expected.starts_with("a boolean") {
        "true or false"
    } else if expected.starts_with("a string") {
        "text"
    } else if expected.starts_with("a sequence") {
        "a list"
    } else {
        "another kind of value"
    }
}
