//! Finding heads from JavaScript (real models' package only: the toy's heads are untrained and
//! its widget stays small): every score of every head of a run's row, the weight moved from
//! chosen queries to chosen keys, attention rollout, and the induction probe.

use std::rc::Rc;

use js_sys::{Float32Array, Object, Reflect};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use super::run::Run;
use super::{from_js, js_error, place, to_js, Model};
use crate::heads::{all_scores, induction_probe, mass, Metric, ScoreOptions, PROBE_LENGTH};
use crate::rollout::{rollout, Fusion};

#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
struct Options {
    metric: Option<String>,
    exclude_bos: bool,
    exclude_current_token: bool,
    /// The query positions scored, `[start, end)`.
    queries: Option<[usize; 2]>,
}

#[wasm_bindgen]
impl Run {
    /// Every score of every layer and head of batch row `row` at `place`: `{ layers, heads,
    /// scores: { previous_token: Float32Array [L·H], … } }`; `options`: `{ metric?: "mul" |
    /// "abs", excludeBos?, excludeCurrentToken?, queries?: [start, end] }`.
    pub fn scores(&self, place_name: &str, row: usize, options: JsValue) -> Result<JsValue, JsValue> {
        let options: Options =
            if options.is_undefined() || options.is_null() { Options::default() } else { from_js("options", options)? };
        let options = ScoreOptions {
            metric: options.metric.as_deref().map(Metric::parse).transpose().map_err(js_error)?.unwrap_or_default(),
            exclude_bos: options.exclude_bos,
            exclude_current_token: options.exclude_current_token,
            queries: options.queries.map(|[a, b]| a..b),
        };
        let at = place(place_name)?;
        let r = self.row_at(place_name, row)?;
        let scores = Object::new();
        for (score, values) in all_scores(r, at, &options).map_err(js_error)? {
            Reflect::set(&scores, &score.name().into(), &Float32Array::from(values.as_slice().unwrap_or(&[])))?;
        }
        let out = Object::new();
        Reflect::set(&out, &"layers".into(), &r.layers().into())?;
        Reflect::set(&out, &"heads".into(), &r.heads().into())?;
        Reflect::set(&out, &"scores".into(), &scores)?;
        Ok(out.into())
    }

    /// The mean weight each head puts from the `queries` positions on the `keys` positions of
    /// batch row `row` at `place`: `Float32Array` `[L·H]`.
    pub fn mass(
        &self,
        place_name: &str,
        row: usize,
        queries: Vec<u32>,
        keys: Vec<u32>,
    ) -> Result<Float32Array, JsValue> {
        let positions = |p: Vec<u32>| p.into_iter().map(|x| x as usize).collect::<Vec<_>>();
        let m = mass(self.row_at(place_name, row)?, &positions(queries), &positions(keys)).map_err(js_error)?;
        Ok(Float32Array::from(m.as_slice().unwrap_or(&[])))
    }

    /// Attention rollout of batch row `row` at a self-attention `place` after every layer,
    /// heads fused by `fusion` ("mean", "max", "min"): `Float32Array` `[L·T·T]`.
    pub fn rollout(&self, place_name: &str, row: usize, fusion: &str) -> Result<Float32Array, JsValue> {
        let fusion = Fusion::parse(fusion).map_err(js_error)?;
        let layers = rollout(self.row_at(place_name, row)?, place(place_name)?, fusion).map_err(js_error)?;
        let flat: Vec<f32> = layers.iter().flat_map(|m| m.iter().copied()).collect();
        Ok(Float32Array::from(&flat[..]))
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProbeInfo {
    place: crate::Place,
    causal: bool,
    length: usize,
    second: usize,
    ids: Vec<u32>,
    layers: usize,
    heads: usize,
}

#[wasm_bindgen]
impl Model {
    /// The induction probe: a start token, then `length` random ordinary tokens (seed
    /// `seed`), then the same again, at `place` (default: the causal place). `{ run, place,
    /// causal, length, second, ids, layers, heads, induction: Float32Array [L·H] }`, the
    /// induction score over the second half.
    pub fn probe(
        &self,
        place_name: Option<String>,
        length: Option<usize>,
        seed: Option<u32>,
    ) -> Result<JsValue, JsValue> {
        let at = place_name.as_deref().map(place).transpose()?;
        let p = induction_probe(&self.model, at, length.unwrap_or(PROBE_LENGTH), u64::from(seed.unwrap_or(0)))
            .map_err(js_error)?;
        let (layers, heads) = p.scores.dim();
        let info = ProbeInfo {
            place: p.place,
            causal: p.causal,
            length: p.length,
            second: p.second,
            ids: p.ids,
            layers,
            heads,
        };
        let out = to_js(&info)?;
        Reflect::set(&out, &"induction".into(), &Float32Array::from(p.scores.as_slice().unwrap_or(&[])))?;
        Reflect::set(
            &out,
            &"run".into(),
            &Run {
                run: p.run,
                model: Some(Rc::clone(&self.model)),
                model_type: self.model.info().architecture.clone(),
            }
            .into(),
        )?;
        Ok(out)
    }
}
