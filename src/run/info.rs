//! What a model is, for a page to build its menus: its places ([`PlaceInfo`]) and the rest
//! ([`ModelInfo`]).

use serde::Serialize;

use crate::attention::mask::MaskKind;
use crate::attention::place::Place;
use crate::error::{Error, Result};

/// One place of a model, as it was trained.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlaceInfo {
    pub place: Place,
    /// The mask it was trained with.
    pub mask: MaskKind,
    pub layers: usize,
    pub heads: usize,
    /// Key/value heads: `heads` unless grouped-query attention, where query head h shares the
    /// keys and values of K/V head h / (heads / kv_heads).
    pub kv_heads: usize,
    /// The width of one head's queries and keys.
    pub d_k: usize,
    /// Per layer, how many keys a local (sliding-window) layer lets a query see, itself
    /// included, or `None` for a layer that sees every key its mask allows. GPT-Neo's local
    /// layers, Mistral's and some Qwen2 layers are windowed.
    pub windows: Vec<Option<usize>>,
}

impl PlaceInfo {
    /// A place whose `layers` layers all have `heads` heads of `d_k`, none grouped or windowed.
    pub fn new(place: Place, mask: MaskKind, layers: usize, heads: usize, d_k: usize) -> Self {
        PlaceInfo { place, mask, layers, heads, kv_heads: heads, d_k, windows: vec![None; layers] }
    }

    /// The same place with `kv_heads` key/value heads.
    pub fn grouped(self, kv_heads: usize) -> Self {
        PlaceInfo { kv_heads, ..self }
    }

    /// The same place with per-layer windows.
    pub fn windowed(self, windows: Vec<Option<usize>>) -> Self {
        PlaceInfo { windows, ..self }
    }
}

/// What a model is, for a page to build its menus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// "toy", or the `model_type` of a real model: "bert", "gpt2", "bart", "marian".
    pub architecture: String,
    /// false for the toy model: its weights are random.
    pub trained: bool,
    /// In the order of the seeds' table.
    pub places: Vec<PlaceInfo>,
    pub encoder_decoder: bool,
    /// Whether the model can write its own target (greedy decoding).
    pub can_generate: bool,
    pub max_tokens: usize,
    pub max_batch: usize,
    pub d_model: usize,
}

impl ModelInfo {
    pub fn place(&self, place: Place) -> Result<&PlaceInfo> {
        self.places.iter().find(|p| p.place == place).ok_or_else(|| Error::PlaceAbsent {
            place: place.name().to_string(),
            have: self.places.iter().map(|p| p.place.name().to_string()).collect(),
        })
    }
}
