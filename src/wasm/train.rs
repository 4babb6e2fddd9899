//! Training in the browser, a few steps per call so the worker redraws, pauses and stops
//! between two:
//!
//! ```js
//! const trainer = new Trainer({ seed: 0 });          // TrainSettings; every field optional
//! const reports = trainer.steps(25);                 // [{ step, loss, copyAccuracy }]
//! const scores = trainer.scores();                   // { step, copyAccuracy, induction, previousToken, probe }
//! const model = trainer.model();                     // a Model like any other: every view opens it
//! const files = trainer.files();                     // { "config.json": Uint8Array, … }: a GPT-2 folder
//! ```

use js_sys::{Object, Reflect, Uint8Array};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::{js_error, typed, Model};
use crate::train::timeline::{step_scores, StepScores, TimelineOptions};
use crate::train::{CheckpointFiles, StepReport, TrainSettings};

#[wasm_bindgen(typescript_custom_section)]
const TRAIN_TYPES: &str = r#"
/** what `new Trainer` is asked; every field has the command line's default */
export interface TrainSettings {
  task?: "induction" | "span_copy" | "previous_token"; layers?: number; dModel?: number; heads?: number;
  vocab?: number; length?: number; batchSize?: number; learningRate?: number; seed?: number; tied?: boolean;
}
export interface StepReport { step: number; loss: number; copyAccuracy: number }
/** every head's scores on the probe, (layers × heads) each, and the probe's text */
export interface TrainScores {
  step: number; copyAccuracy: number; induction: number[][]; previousToken: number[][]; probe: string;
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "TrainSettings | undefined")]
    pub type TrainSettingsJs;
    #[wasm_bindgen(typescript_type = "StepReport[]")]
    pub type StepReportsJs;
    #[wasm_bindgen(typescript_type = "TrainScores")]
    pub type TrainScoresJs;
}

/// The most steps one call takes: a page asks for a few dozen between two frames.
const MAX_STEPS_A_CALL: usize = 10_000;

/// A model in training.
#[wasm_bindgen]
pub struct Trainer {
    inner: crate::train::Trainer,
    options: TimelineOptions,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ScoresOut {
    #[serde(flatten)]
    scores: StepScores,
    probe: String,
}

#[wasm_bindgen]
impl Trainer {
    /// GPT-2's initial weights for the settings' seed. Fails with `bad_train_setting` naming
    /// the setting.
    #[wasm_bindgen(constructor)]
    pub fn new(settings: TrainSettingsJs) -> Result<Trainer, JsValue> {
        let settings: JsValue = settings.into();
        let settings: TrainSettings = if settings.is_undefined() || settings.is_null() {
            TrainSettings::default()
        } else {
            super::from_js("training settings", settings)?
        };
        let inner = crate::train::Trainer::new(settings).map_err(js_error)?;
        let options = TimelineOptions::new(&settings, 0);
        Ok(Trainer { inner, options })
    }

    /// Takes `count` steps (at most 10,000) and gives their reports. A loss that is not a
    /// number stops it with `diverged`; the weights before that step are kept.
    pub fn steps(&mut self, count: usize) -> Result<StepReportsJs, JsValue> {
        let mut reports: Vec<StepReport> = Vec::with_capacity(count.min(MAX_STEPS_A_CALL));
        for _ in 0..count.min(MAX_STEPS_A_CALL) {
            reports.push(self.inner.step().map_err(js_error)?);
        }
        typed(&reports)
    }

    /// Steps taken.
    #[wasm_bindgen(getter)]
    pub fn step(&self) -> usize {
        self.inner.steps()
    }

    /// Every head's induction and previous-token scores on the probe now, as `headmap heads`
    /// gives them on these weights, with the copy accuracy since the last call.
    pub fn scores(&mut self) -> Result<TrainScoresJs, JsValue> {
        let (scores, probe) = step_scores(&mut self.inner, &self.options).map_err(js_error)?;
        typed(&ScoresOut { scores, probe })
    }

    /// The model as it is now, for every view.
    pub fn model(&self) -> Result<Model, JsValue> {
        let model = self.checkpoint()?.model().map_err(js_error)?;
        Ok(Model { model: std::rc::Rc::new(model) })
    }

    /// The model's files by name, as a folder holds them: what transformers' GPT2LMHeadModel
    /// and headmap load.
    pub fn files(&self) -> Result<Object, JsValue> {
        let files = self.checkpoint()?;
        let out = Object::new();
        for (name, bytes) in files.named() {
            Reflect::set(&out, &name.into(), &Uint8Array::from(bytes))?;
        }
        Ok(out)
    }
}

impl Trainer {
    fn checkpoint(&self) -> Result<CheckpointFiles, JsValue> {
        CheckpointFiles::new(&self.inner.layout, &self.inner.weights).map_err(js_error)
    }
}
