//! Activation patching per head (TransformerLens's `get_act_patch_attn_head_out_all_pos`):
//!
//! ```text
//! z_h(corrupt) := z_h(clean)       one head at a time, at every position
//! map[l][h] = (LD_patched − LD_corrupt) / (LD_clean − LD_corrupt),   LD = logit(answer) − logit(wrong)
//! ```
//!
//! The clean run's head outputs are patched into the corrupted run as a [`HeadEdit::Output`],
//! so every layer after the patched head is computed again; the layers below it are the
//! corrupted run's, begun from its residual stream ([`Start`]) where the patched place is in
//! the stack that ends the model, and the logits read are the two answers' alone.

use std::sync::Arc;

use ndarray::{s, Array2, ArrayView1};
use serde::Serialize;

use super::head::{Candidate, OutputHead, Softmax};
use super::predict::shown;
use super::Model;
use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::run::{HeadAt, HeadEdit, HeadEdits, Request, Run, Settings, Start, Store};
use crate::tokenize::{Token, TokenKind};

/// What [`Model::patch`] is asked.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PatchRequest {
    pub clean: String,
    pub corrupt: String,
    /// An encoder–decoder's decoder input, the same for both runs; default: none (the texts).
    pub target: Option<String>,
    /// The word the clean run should predict, and the one the corrupted run leans to.
    pub answer: String,
    pub wrong: String,
    /// Where the logits are read; default: the last real token for a decoder, the first
    /// mask token (else the last word) for a masked LM, and for an encoder–decoder the
    /// position that writes the answer in its target (the one before it), else the last.
    pub position: Option<usize>,
    /// The place whose heads are patched; default as for ablation.
    pub place: Option<Place>,
}

/// Activation patching per head: the file `headmap patch` writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Patching {
    pub format: &'static str,
    pub version: u32,
    pub model_type: String,
    pub place: Place,
    pub tokens: Vec<String>,
    pub position: usize,
    pub answer: Candidate,
    pub wrong: Candidate,
    /// logit(answer) − logit(wrong) in the clean and the corrupted run.
    pub clean_diff: f32,
    pub corrupt_diff: f32,
    /// `[layers][heads]`: (patched − corrupt) / (clean − corrupt); 0 where clean = corrupt.
    pub map: Vec<Vec<f32>>,
}

impl Model {
    /// Activation patching of every head at one place, as many heads at once as there are
    /// threads, `progress(done, total)` told after each and stopping the work when it answers
    /// false (the heads not run stay 0).
    pub fn patch(&self, request: &PatchRequest, mut progress: impl FnMut(usize, usize) -> bool) -> Result<Patching> {
        let mut patcher = Patcher::new(self, request)?;
        while patcher.step_heads(self, crate::par::threads())? > 0 {
            if !progress(patcher.done(), patcher.total()) {
                break;
            }
        }
        Ok(patcher.result)
    }
}

/// Activation patching one head at a time, for a page that shows progress and can stop
/// between heads: the clean run's head outputs and both logit differences are computed once.
pub struct Patcher {
    request: Request,
    place: Place,
    d_k: usize,
    position: usize,
    ids: (u32, u32),
    /// The clean run, whose head outputs are patched in (layer by layer, recomputed from its
    /// inputs as each layer is reached).
    clean: Run,
    /// The clean run's outputs of the layer being patched, (Tq, H·d_k).
    layer_outputs: Option<(usize, Array2<f32>)>,
    /// The corrupted run's residual stream after each layer of the stack that ends the model,
    /// where a patched run begins.
    residuals: Vec<Arc<Array2<f32>>>,
    next: usize,
    pub result: Patching,
}

impl Patcher {
    /// Checks `request` against `model` and runs the clean and the corrupted text.
    pub fn new(model: &Model, request: &PatchRequest) -> Result<Self> {
        let head = model.output_head()?;
        let place = request.place.unwrap_or(model.default_head_place());
        let info = model.info.place(place)?.clone();
        let (answer, wrong) = (model.one_token(&request.answer)?, model.one_token(&request.wrong)?);
        let (clean, corrupt) = (model.tokenize(&request.clean)?, model.tokenize(&request.corrupt)?);
        if clean.ids.len() != corrupt.ids.len() {
            return Err(Error::LengthsDiffer { clean: clean.ids.len(), corrupt: corrupt.ids.len() });
        }
        let request_of = |text: &str| Request {
            texts: vec![text.to_string()],
            targets: request.target.iter().cloned().collect(),
            ..Request::default()
        };
        let on_demand = Settings { store: Store::OnDemand, ..Settings::trained() };
        let clean_run = model.run_batch_of(&request_of(&request.clean), on_demand.clone())?;
        let corrupt_request = request_of(&request.corrupt);
        let corrupt_run = model.run_batch_of(&corrupt_request, Settings { residuals: true, ..on_demand })?;
        let out = clean_run.places.last().ok_or(Error::EmptyText)?.row(0)?;
        let position = match request.position {
            Some(p) => {
                Error::check_index("position", p, out.queries.len())?;
                p
            }
            None => {
                let masked_lm = model.info.places.iter().all(|p| p.place == Place::EncoderSelf);
                let answer_piece = model.info.encoder_decoder.then(|| model.tokenizer.piece(answer)).flatten();
                default_position(&out.queries, masked_lm, answer_piece.as_deref())
            }
        };
        let clean_diff = run_diff(head, &clean_run, position, (answer, wrong))?;
        let corrupt_diff = run_diff(head, &corrupt_run, position, (answer, wrong))?;
        // each word's probability where the logits are read, in the clean run
        let logits = head.logits_one(hidden_of(&clean_run)?.row(position))?;
        let clean_p = Softmax::of(logits.view());
        let candidate =
            |id: u32| Candidate { id, token: model.tokenizer.piece(id).unwrap_or_default(), p: clean_p.p(id) };
        let result = Patching {
            format: "headmap.patching",
            version: 1,
            model_type: model.info.architecture.clone(),
            place,
            tokens: shown(&out.queries),
            position,
            answer: candidate(answer),
            wrong: candidate(wrong),
            clean_diff,
            corrupt_diff,
            map: vec![vec![0.0; info.heads]; info.layers],
        };
        Ok(Patcher {
            request: corrupt_request,
            place,
            d_k: info.d_k,
            position,
            ids: (answer, wrong),
            clean: clean_run,
            layer_outputs: None,
            residuals: corrupt_run
                .hidden
                .into_iter()
                .next()
                .map_or_else(Vec::new, |h| h.residuals.into_iter().map(Arc::new).collect()),
            next: 0,
            result,
        })
    }

    /// Heads patched so far, and of how many.
    pub fn done(&self) -> usize {
        self.next
    }

    pub fn total(&self) -> usize {
        self.result.map.len() * self.result.map.first().map_or(0, Vec::len)
    }

    /// Patches the next head into the corrupted run: false when every head is done.
    pub fn step(&mut self, model: &Model) -> Result<bool> {
        Ok(self.step_heads(model, 1)? > 0)
    }

    /// Patches up to `count` of the next heads of one layer, side by side on the threads (each
    /// patched run is its own): how many it patched, 0 once every head is done.
    pub fn step_heads(&mut self, model: &Model, count: usize) -> Result<usize> {
        let heads = self.result.map.first().map_or(0, Vec::len);
        if self.next >= self.total() {
            return Ok(0);
        }
        let (layer, first) = (self.next / heads, self.next % heads);
        if self.layer_outputs.as_ref().is_none_or(|(l, _)| *l != layer) {
            let z = self.clean.place(self.place)?.row(0)?.head_outputs(layer)?; // (Tq, H·d_k)
            self.layer_outputs = Some((layer, z));
        }
        let batch: Vec<usize> = (first..(first + count.max(1)).min(heads)).collect();
        let this = &*self;
        let diffs = crate::par::map(&batch, |&h| this.patched_diff(model, layer, h));
        let (clean, corrupt) = (self.result.clean_diff, self.result.corrupt_diff);
        let span = clean - corrupt;
        for (&h, patched) in batch.iter().zip(diffs) {
            let patched = patched?;
            self.result.map[layer][h] = if span.abs() > f32::EPSILON { (patched - corrupt) / span } else { 0.0 };
        }
        self.next += batch.len();
        Ok(batch.len())
    }

    /// The logit difference of the corrupted run with head `h` of `layer` given the clean
    /// run's output.
    fn patched_diff(&self, model: &Model, layer: usize, h: usize) -> Result<f32> {
        let z = &self.layer_outputs.as_ref().ok_or(Error::NeedsModel)?.1;
        let d = self.d_k;
        let patched = Arc::new(z.slice(s![.., h * d..(h + 1) * d]).to_owned()); // (Tq, d_k)
        let at = HeadAt { place: self.place, layer, head: h };
        // the layers below are the corrupted run's when the patched place is in the stack
        // whose residual stream it kept (cross-attention is in the decoder's blocks)
        let stack = if self.place == Place::Cross { Place::DecoderSelf } else { self.place };
        let start = match layer.checked_sub(1).and_then(|below| self.residuals.get(below)) {
            Some(residual) if stack == model.default_head_place() => {
                Some(Start { place: stack, layer, residual: Arc::clone(residual) })
            }
            _ => None,
        };
        let settings = Settings {
            // the place whose stack ends the model: an encoder–decoder runs its decoder only for a kept one
            keep: vec![model.default_head_place()],
            store: Store::OnDemand,
            edits: HeadEdits::new(vec![(at, HeadEdit::Output(patched))]),
            start,
            ..Settings::trained()
        };
        let run = model.run_batch_of(&self.request, settings)?;
        run_diff(model.output_head()?, &run, self.position, self.ids)
    }
}

/// logit(answer) − logit(wrong) at `position` of the first row of `run`.
fn run_diff(head: &OutputHead, run: &Run, position: usize, (answer, wrong): (u32, u32)) -> Result<f32> {
    logit_diff(head, hidden_of(run)?.row(position), answer, wrong)
}

/// The last hidden states of a run's one text: the decoder's, else the encoder's.
fn hidden_of(run: &Run) -> Result<&Array2<f32>> {
    run.hidden.first().and_then(|h| h.decoder.as_ref().or(h.encoder.as_ref())).ok_or(Error::NeedsModel)
}

/// logit(answer) − logit(wrong) of the hidden state `h` (D,).
fn logit_diff(head: &OutputHead, h: ArrayView1<f32>, answer: u32, wrong: u32) -> Result<f32> {
    let logits = head.logits_of(h, &[answer, wrong])?;
    Ok(logits[0] - logits[1])
}

/// Where a patch reads its logits when not told: a masked LM's first mask token; in an
/// encoder–decoder's target that holds the answer (`answer`, its piece), the position before
/// its first occurrence, the one that writes it; else the last token that is text (not PAD or
/// a special token).
fn default_position(tokens: &[Token], masked_lm: bool, answer: Option<&str>) -> usize {
    let is_mask = |t: &Token| matches!(t.piece.as_str(), "[MASK]" | "<mask>");
    if masked_lm {
        if let Some(p) = tokens.iter().position(is_mask) {
            return p;
        }
    }
    if let Some(p) = answer.and_then(|a| tokens.iter().skip(1).position(|t| t.piece == a)) {
        return p; // the position before the answer: skip(1) counts from the second token
    }
    tokens.iter().rposition(|t| !matches!(t.kind, TokenKind::Pad | TokenKind::Special)).unwrap_or(0)
}

#[cfg(all(test, feature = "hf", not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::models::tests::fixture;

    /// A patched run begun from the corrupted run's residual stream is the run from the first
    /// layer, bit for bit, whether heads are patched one or several at a time, in every kind
    /// of stack: pre-norm (GPT-2, Llama), parallel (GPT-NeoX), post-LN encoders (RoBERTa,
    /// DistilBERT), and the decoders of BART and T5 at both of their places.
    #[test]
    fn patched_runs_begun_partway_equal_runs_from_the_first_layer() {
        let cases = [
            ("gpt2", Place::DecoderSelf),
            ("gpt_neox", Place::DecoderSelf),
            ("llama", Place::DecoderSelf),
            ("roberta", Place::EncoderSelf),
            ("distilbert", Place::EncoderSelf),
            ("bart", Place::DecoderSelf),
            ("bart", Place::Cross),
            ("t5", Place::DecoderSelf),
            ("t5", Place::Cross),
        ];
        for (name, place) in cases {
            let model = fixture(name);
            let encoder_decoder = model.info.encoder_decoder;
            // the fixtures' vocabularies are a few hundred pieces: two words each reads as one token
            let mut single =
                ["a", "e", "b", "c", "d", "I", "T", "the"].into_iter().filter(|w| model.one_token(w).is_ok());
            let (answer, wrong) = (single.next().unwrap(), single.next().unwrap());
            let request = PatchRequest {
                clean: "a b c d e".into(),
                corrupt: "a b d d e".into(),
                target: encoder_decoder.then(|| "e d c b".into()),
                answer: answer.into(),
                wrong: wrong.into(),
                place: Some(place),
                ..PatchRequest::default()
            };
            let patched = |begun: bool| {
                let mut patcher = Patcher::new(&model, &request).unwrap_or_else(|e| panic!("{name}: {e}"));
                if begun {
                    // three heads at a time, on the threads, across the ends of layers
                    while patcher.step_heads(&model, 3).unwrap() > 0 {}
                } else {
                    patcher.residuals.clear();
                    while patcher.step(&model).unwrap() {}
                }
                patcher.result
            };
            let (begun, whole) = (patched(true), patched(false));
            assert_eq!(begun.map, whole.map, "{name} {place:?}");
            // the two words' probabilities in the clean run: softmax values whose ratio is
            // e^(logit difference)
            let (pa, pw) = (begun.answer.p as f64, begun.wrong.p as f64);
            assert!(
                pa > 0.0 && pa < 1.0 && pw > 0.0 && pw < 1.0 && pa + pw <= 1.0 + 1e-6,
                "{name} {place:?}: {pa} {pw}"
            );
            assert!(
                ((pa / pw).ln() - begun.clean_diff as f64).abs() < 1e-3,
                "{name} {place:?}: {pa} {pw} {}",
                begun.clean_diff
            );
            let above = begun.map.iter().skip(1).flatten();
            assert!(above.clone().any(|&v| v != 0.0), "{name} {place:?}: heads above the first layer matter");
        }
    }
}
