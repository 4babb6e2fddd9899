//! A run as JavaScript holds it: the weights stay in wasm memory and leave as exactly what a
//! view draws. A run keeps its model (shared, not copied), so tracing or saving it still works
//! after the page has let the model go.

use std::rc::Rc;

use js_sys::{Float32Array, Uint8Array};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::trace::TraceOut;
use super::{js_error, place, to_js, typed, HeadTraceJs, HeadWritesJs, RowTokensJs, RowWeightsJs, RunInfoJs, ViewJs};
use crate::attention::mask::MaskKind;
use crate::attention::place::Place;
use crate::cost::Cost;
use crate::run::RowAttention;
use crate::stats;
use crate::tokenize::{coverage, Coverage, Token};

/// The attention of one run, kept in wasm memory until asked for.
#[wasm_bindgen]
pub struct Run {
    pub(crate) run: crate::run::Run,
    /// The model that made it: what a trace recomputes from. None for weights read from a file.
    pub(crate) model: Option<Rc<crate::models::Model>>,
    /// What an export names as its model_type: the model's architecture, or the file's label.
    pub(crate) model_type: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PlaceSummary {
    place: Place,
    mask: MaskKind,
    what_if: bool,
    scale: bool,
    batch: usize,
    layers: usize,
    heads: usize,
    tq: usize,
    tk: usize,
    cost: Cost,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RowTokens<'a> {
    queries: &'a [Token],
    keys: &'a [Token],
    query_valid: &'a [bool],
    key_valid: &'a [bool],
    coverage: Sides<Coverage>,
}

#[derive(Serialize)]
struct Sides<T> {
    queries: T,
    keys: T,
}

impl<'a> RowTokens<'a> {
    fn of(row: &'a RowAttention) -> Self {
        RowTokens {
            queries: &row.queries,
            keys: &row.keys,
            query_valid: &row.query_valid,
            key_valid: &row.key_valid,
            coverage: Sides { queries: coverage(&row.queries), keys: coverage(&row.keys) },
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RowWeights<'a> {
    #[serde(flatten)]
    tokens: RowTokens<'a>,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    weights: Float32Array,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    allowed: Uint8Array,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    maxima: Float32Array,
}

/// What every head of one layer writes.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Writes {
    #[serde(with = "serde_wasm_bindgen::preserve")]
    norms: Float32Array,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    shares: Float32Array,
}

/// What a view of one head draws, in one call.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct View {
    #[serde(with = "serde_wasm_bindgen::preserve")]
    weights: Float32Array,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    allowed: Uint8Array,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    entropies: Float32Array,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    entropy_limits: Float32Array,
    #[serde(with = "serde_wasm_bindgen::preserve")]
    maxima: Float32Array,
}

fn floats(values: &[f32]) -> Float32Array {
    Float32Array::from(values)
}

#[wasm_bindgen]
impl Run {
    /// The kept places: `{ places: [{ place, mask, whatIf, scale, batch, layers, heads, tq,
    /// tk, cost: { scoreMacs, flops, weightBytes } }] }`, cost per batch row over all layers.
    pub fn info(&self) -> Result<RunInfoJs, JsValue> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct RunInfo<'a> {
            places: Vec<PlaceSummary>,
            model_type: &'a str,
            from_file: bool,
        }
        let places = self
            .run
            .places
            .iter()
            .map(|p| {
                let (heads, tq, tk) = p.shape();
                PlaceSummary {
                    place: p.place,
                    mask: p.mask,
                    what_if: p.what_if,
                    scale: p.scale,
                    batch: p.batch(),
                    layers: p.layers(),
                    heads,
                    tq,
                    tk,
                    cost: p.cost(),
                }
            })
            .collect();
        typed(&RunInfo { places, model_type: &self.model_type, from_file: self.model.is_none() })
    }

    /// The tokens of batch row `row` at `place`, both sides, with their validity and how much
    /// of the text the model read (`coverage`).
    pub fn tokens(&self, place_name: &str, row: usize) -> Result<RowTokensJs, JsValue> {
        typed(&RowTokens::of(self.row_at(place_name, row)?))
    }

    /// Everything of batch row `row` at `place` in one copy: its tokens, `weights`
    /// `[L, H, Tq, Tk]`, `allowed` `[L, Tq, Tk]` and each head's largest weight `[L, H]`.
    pub fn row(&self, place_name: &str, row: usize) -> Result<RowWeightsJs, JsValue> {
        let r = self.row_at(place_name, row)?;
        // (L, H, Tq, Tk), refused when too large: copied layer by layer straight into the
        // page's array (a whole row in wasm memory first would be a second 75 MB copy at 512)
        let size = r.weights_len().map_err(js_error)?; // at most 1 GiB: fits a u32 count
        let per_layer = size / r.layers().max(1);
        let weights = Float32Array::new_with_length(size as u32);
        r.each_layer(|layer, w| {
            let at = (layer * per_layer) as u32;
            weights.subarray(at, at + w.len() as u32).copy_from(w);
        })
        .map_err(js_error)?;
        let mut allowed = Vec::with_capacity(r.layers() * r.size().0 * r.size().1);
        for layer in 0..r.layers() {
            allowed.extend(r.mask(layer).map_err(js_error)?.allowed().iter().map(|&a| u8::from(a)));
        }
        let maxima = r.maxima().map_err(js_error)?;
        typed(&RowWeights {
            tokens: RowTokens::of(r),
            weights,
            allowed: Uint8Array::from(&allowed[..]),
            maxima: floats(maxima.as_slice().unwrap_or(&[])),
        })
    }

    /// Every head of one layer in one copy: `Float32Array` `[H, Tq, Tk]`.
    pub fn layer(&self, place_name: &str, row: usize, layer: usize) -> Result<Float32Array, JsValue> {
        let weights = self.row_at(place_name, row)?.layer(layer).map_err(js_error)?; // (H, Tq, Tk)
        let weights = weights.as_standard_layout();
        Ok(floats(weights.as_slice().unwrap_or(&[])))
    }

    /// What a view of one head draws, in one call: `{ weights [Tq, Tk], allowed [Tq, Tk],
    /// entropies [Tq] (this head's, in bits), entropyLimits [Tq], maxima [L, H] }`.
    pub fn view(&self, place_name: &str, row: usize, layer: usize, head: usize) -> Result<ViewJs, JsValue> {
        let r = self.row_at(place_name, row)?;
        let weights = r.head(layer, head).map_err(js_error)?; // (Tq, Tk)
        let mask = r.mask(layer).map_err(js_error)?;
        let entropies = stats::row_entropy_bits(weights.view().insert_axis(ndarray::Axis(0))); // (1, Tq)
        let maxima = r.maxima().map_err(js_error)?;
        let allowed: Vec<u8> = mask.allowed().iter().map(|&a| u8::from(a)).collect();
        typed(&View {
            weights: floats(weights.as_slice().unwrap_or(&[])),
            allowed: Uint8Array::from(&allowed[..]),
            entropies: floats(entropies.as_slice().unwrap_or(&[])),
            entropy_limits: floats(stats::entropy_limits(mask.allowed()).as_slice().unwrap_or(&[])),
            maxima: floats(maxima.as_slice().unwrap_or(&[])),
        })
    }

    /// What every head of `layer` writes, recomputed from the run's model with the heads it
    /// turned off writing nothing: `{ norms [H, Tq], shares [H, Tq] }`.
    pub fn writes(&self, place_name: &str, row: usize, layer: usize) -> Result<HeadWritesJs, JsValue> {
        let w = self.run.head_writes(place(place_name)?, row, layer).map_err(js_error)?;
        let flat = |a: &ndarray::Array2<f32>| floats(a.as_slice().unwrap_or(&[]));
        typed(&Writes { norms: flat(&w.norms), shares: flat(&w.shares) })
    }

    /// ‖v_j W_O^h‖ of every head and key of `layer`: `Float32Array` `[H, Tk]`. A head's
    /// value-weighted weights (what key j adds to query i) are its weights times this, column
    /// by column.
    #[wasm_bindgen(js_name = valueNorms)]
    pub fn value_norms(&self, place_name: &str, row: usize, layer: usize) -> Result<Float32Array, JsValue> {
        let norms = self.row_at(place_name, row)?.value_norms(layer).map_err(js_error)?;
        Ok(floats(norms.as_slice().unwrap_or(&[])))
    }

    /// The weights of one head: `Float32Array` `[Tq, Tk]`.
    pub fn head(&self, place_name: &str, row: usize, layer: usize, head: usize) -> Result<Float32Array, JsValue> {
        let w = self.row_at(place_name, row)?.head(layer, head).map_err(js_error)?;
        Ok(floats(w.as_slice().unwrap_or(&[])))
    }

    /// Which cells of `layer` the mask lets through: `Uint8Array` `[Tq, Tk]`, 1 where query i
    /// may see key j, 0 where the cell is masked.
    pub fn allowed(&self, place_name: &str, row: usize, layer: usize) -> Result<Uint8Array, JsValue> {
        let mask = self.row_at(place_name, row)?.mask(layer).map_err(js_error)?;
        let cells: Vec<u8> = mask.allowed().iter().map(|&a| u8::from(a)).collect();
        Ok(Uint8Array::from(&cells[..]))
    }

    /// One head max-pooled to `[height, width]` pixels for drawing (-1 where all is masked).
    pub fn pooled(
        &self,
        place_name: &str,
        row: usize,
        layer: usize,
        head: usize,
        height: usize,
        width: usize,
    ) -> Result<Float32Array, JsValue> {
        let pooled = self.row_at(place_name, row)?.pooled(layer, head, height, width).map_err(js_error)?;
        Ok(floats(pooled.as_slice().unwrap_or(&[])))
    }

    /// Every step of head `head` in layer `layer` of batch row `row` at `place`, recomputed
    /// from the run's own model.
    pub fn trace(&self, place_name: &str, row: usize, layer: usize, head: usize) -> Result<HeadTraceJs, JsValue> {
        let model = self.model.as_ref().ok_or_else(|| js_error(crate::error::Error::NeedsModel))?;
        let t = model.trace(&self.run, place(place_name)?, row, layer, head).map_err(js_error)?;
        typed(&TraceOut::of(&t, row, layer, head))
    }

    /// The run as the command line's JSON document (see `export.rs`), for saving.
    pub fn json(&self) -> Result<JsValue, JsValue> {
        to_js(&crate::export::export(&self.model_type, &self.run))
    }

    /// The model that made this run, as a handle of its own (the same model, not a copy): a
    /// page that let the model go gets it back from a run it kept, without loading it again.
    /// `undefined` for weights read from a file.
    pub fn model(&self) -> Option<super::Model> {
        self.model.as_ref().map(|model| super::Model { model: Rc::clone(model) })
    }

    /// Weights computed elsewhere: headmap's JSON or a safetensors file of attention (see
    /// `docs/attention.schema.json`), checked and kept like a run of a model's own, with no
    /// model behind it (a trace says it needs one). `name` names the file in errors.
    #[cfg(feature = "hf")]
    #[wasm_bindgen(js_name = fromFile)]
    pub fn from_file(name: &str, bytes: &[u8]) -> Result<Run, JsValue> {
        let imported = crate::import::read(name, bytes).map_err(js_error)?;
        Ok(Run { run: imported.run, model: None, model_type: imported.model_type })
    }

    /// The run as CSV, one line per weight.
    pub fn csv(&self) -> Result<String, JsValue> {
        crate::export::csv(&self.run).map_err(js_error)
    }
}

impl Run {
    pub(crate) fn row_at(&self, place_name: &str, row: usize) -> Result<&RowAttention, JsValue> {
        let place = self.run.place(place(place_name)?).map_err(js_error)?;
        place.row(row).map_err(js_error)
    }
}
