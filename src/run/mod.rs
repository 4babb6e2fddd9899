//! What a model is asked (a [`Request`]) and what it gives back (a [`Run`]): per place
//! attention is used, per batch row, every layer's and head's weights in one array.
//! The layer between `attention` and `models`: the toy model and every real model make one,
//! `import` builds one from a file with no model at all, and `heads`, `rollout`, `qk` and
//! `export` read it.
//!
//! `request` holds what goes in (texts, padded rows, settings), `info` what a model is,
//! `record` what a run keeps of each row and layer; a [`Run`] gathers them per place.

mod attend;
mod edits;
mod info;
mod record;
mod request;

use ndarray::Array2;

#[cfg(feature = "hf")]
pub(crate) use attend::in_block;
pub(crate) use attend::{attend, attend_weights};
pub use edits::{Ablation, HeadAt, HeadEdit, HeadEdits};
pub use info::{ModelInfo, PlaceInfo};
pub(crate) use record::check_size;
pub use record::{thumbnail_pixels, LayerInputs, RowAttention, MAX_WEIGHT_BYTES};
pub use request::{Batch, Request, Row, Settings, Start, Store, Until, KEEP_ALL_BYTES};

use crate::attention::mask::MaskKind;
use crate::attention::multi_head::HeadWrites;
use crate::attention::place::Place;
use crate::cost::Cost;
use crate::error::{Error, Result};

/// Every batch row at one place.
#[derive(Debug, Clone)]
pub struct PlaceRun {
    pub place: Place,
    /// The mask this place ran with.
    pub mask: MaskKind,
    /// true when `mask` is not the one the place was trained with.
    pub what_if: bool,
    /// Whether the scores were scaled ([`Settings::scale_scores`]; `scale` in what the page
    /// reads).
    pub scale: bool,
    /// The width of one head's queries and keys.
    pub d_k: usize,
    pub rows: Vec<RowAttention>,
    layers: usize,
    heads: usize,
    keep: bool,
    /// The thumbnails' longer side a row that does not keep its weights pools every head to
    /// ([`Settings::thumbs`]).
    thumbs: Option<usize>,
}

impl PlaceRun {
    pub fn new(info: &PlaceInfo, settings: &Settings) -> Self {
        let mask = settings.mask(info.place, info.mask);
        PlaceRun {
            place: info.place,
            mask,
            what_if: mask != info.mask,
            scale: settings.scale_scores,
            d_k: info.d_k,
            rows: Vec::new(),
            layers: info.layers,
            heads: info.heads,
            keep: settings.store != Store::OnDemand,
            thumbs: settings.thumbs,
        }
    }

    /// Rows read from a file ([`crate::import`]): their weights are kept, nothing computes them
    /// again; `d_k` is unknown (0).
    pub fn from_rows(place: Place, mask: MaskKind, what_if: bool, rows: Vec<RowAttention>) -> Self {
        let (layers, heads) = rows.first().map_or((0, 0), |r| (r.layers(), r.heads()));
        PlaceRun { place, mask, what_if, scale: true, d_k: 0, rows, layers, heads, keep: true, thumbs: None }
    }

    /// An empty record of one batch row, `queries` over `keys`, as this place stores it.
    pub fn record(&self, queries: &Row, keys: &Row) -> RowAttention {
        let mut row = RowAttention::new(queries, keys, self.layers, self.heads, self.scale, self.keep);
        // the toy-only build never pools ahead (its long runs compute each layer again for the
        // thumbnails): its download leaves the code out
        if let Some(size) = self.thumbs.filter(|_| cfg!(feature = "hf")) {
            row.pool(size);
        }
        row
    }

    pub fn batch(&self) -> usize {
        self.rows.len()
    }

    pub fn layers(&self) -> usize {
        self.rows.first().map_or(0, RowAttention::layers)
    }

    pub fn heads(&self) -> usize {
        self.rows.first().map_or(0, RowAttention::heads)
    }

    /// (H, Tq, Tk), the same for every row of a padded batch.
    pub fn shape(&self) -> (usize, usize, usize) {
        self.rows.first().map_or((0, 0, 0), |r| (r.heads(), r.size().0, r.size().1))
    }

    pub fn row(&self, row: usize) -> Result<&RowAttention> {
        Error::check_index("row", row, self.rows.len())?;
        Ok(&self.rows[row])
    }

    /// The attention cost of one batch row over all layers.
    pub fn cost(&self) -> Cost {
        let (h, tq, tk) = self.shape();
        Cost::of_attention(h, tq, tk, self.d_k, self.d_k).times(self.layers())
    }
}

/// The last hidden states of one batch row; `None` where the run was asked for weights only
/// ([`Settings::hidden`] false) and the stack stopped at its last layer's weights.
#[derive(Debug, Clone, Default)]
pub struct Hidden {
    /// The encoder's output (BERT, BART, the toy), (Ts, D).
    pub encoder: Option<Array2<f32>>,
    /// The decoder's output (GPT-2, BART, the toy), (Tt, D).
    pub decoder: Option<Array2<f32>>,
    /// With [`Settings::residuals`], the residual stream after each layer of the stack that
    /// ends the model (the decoder, or an encoder on its own), before any final norm: L × (T, D).
    pub residuals: Vec<Array2<f32>>,
}

/// What one run of a model gives: the kept places in the order of the seeds' table, and the
/// last hidden states per batch row.
#[derive(Debug, Clone, Default)]
pub struct Run {
    pub places: Vec<PlaceRun>,
    pub hidden: Vec<Hidden>,
    /// The heads the run turned off or patched: what [`Run::head_writes`] applies again.
    pub edits: HeadEdits,
}

impl Run {
    pub fn place(&self, place: Place) -> Result<&PlaceRun> {
        self.places.iter().find(|p| p.place == place).ok_or_else(|| Error::PlaceAbsent {
            place: place.name().to_string(),
            have: self.places.iter().map(|p| p.place.name().to_string()).collect(),
        })
    }

    pub fn batch(&self) -> usize {
        self.places.first().map_or(0, PlaceRun::batch)
    }

    /// What every head of `layer` at `place` writes at each query of batch row `row`, with
    /// the heads this run turned off writing nothing (see [`HeadWrites`]).
    pub fn head_writes(&self, place: Place, row: usize, layer: usize) -> Result<HeadWrites> {
        self.place(place)?.row(row)?.head_writes(layer, &self.edits.at(place, layer))
    }
}
