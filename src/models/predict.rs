//! What a model predicts, and what a head does to it:
//!
//! ```text
//! predictions   softmax(head(h_L))              at every position: the next token for a decoder
//!                                               (teacher-forced on the target in an encoder–decoder),
//!                                               the token at a position for a masked LM
//! logit lens    softmax(head(norm_f(r_l)))      r_l the residual stream after layer l (nostalgebraist)
//! ablation      z_h := 0, or z_h := mean z_h    z_h = head h's weights · V, before W_O (hook_z)
//! patching      z_h(corrupt) := z_h(clean)      one head at a time; the map is
//!               (LD_patched − LD_corrupt) / (LD_clean − LD_corrupt), LD = logit(answer) − logit(wrong)
//! ```
//!
//! Ablated heads are edits a run carries ([`crate::run::HeadEdits`]): every layer after them
//! is computed again with the change, their attention included. Patching is in [`super::patch`].

use ndarray::{s, Array1, Array2};
use serde::Serialize;

use super::head::{Candidate, OutputHead, Softmax};
use super::Model;
use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::run::{Ablation, HeadAt, HeadEdit, HeadEdits, Request, Run, Settings, Store};
use crate::tokenize::{Token, TokenKind};

/// What [`Model::predict`] is asked besides the texts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PredictOptions {
    /// How many tokens each position lists.
    pub top_k: usize,
    /// The logit lens: `None` for none, `Some(None)` for every position, `Some(Some(p))` for
    /// position p alone (what a large vocabulary can afford).
    pub lens: Option<Option<usize>>,
    /// Heads turned off, and how.
    pub ablate: Vec<HeadAt>,
    pub ablation: Ablation,
}

/// One layer's guess at one position through the logit lens.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LensGuess {
    #[serde(flatten)]
    pub top: Candidate,
    /// The probability this layer gives the last layer's top token.
    pub p_final: f32,
}

/// One batch row's predictions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowPredictions {
    /// The tokens predictions are made at, as a reader is shown them: an encoder–decoder's
    /// decoder inputs, every token otherwise.
    pub tokens: Vec<String>,
    /// Per position, the top k, best first; `None` at PAD.
    pub predictions: Vec<Option<Vec<Candidate>>>,
    /// Per layer, per position, the lens's top token (`None` at PAD and at positions not asked).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lens: Option<Vec<Vec<Option<LensGuess>>>>,
}

/// What [`Model::predict`] gives: the file the command line writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Predictions {
    pub format: &'static str,
    pub version: u32,
    pub model_type: String,
    /// The heads turned off, as `place:layer.head`.
    pub ablated: Vec<String>,
    pub ablation: Ablation,
    pub rows: Vec<RowPredictions>,
}

impl Model {
    /// The place a head without one is at: the decoder's self-attention for a model that has
    /// a decoder, else the encoder's.
    pub fn default_head_place(&self) -> Place {
        match self.info.places.iter().any(|p| p.place == Place::DecoderSelf) {
            true => Place::DecoderSelf,
            false => Place::EncoderSelf,
        }
    }

    /// `spec` (`1.0,cross:0.3`) as heads of this model, each checked to exist.
    pub fn heads(&self, spec: &str) -> Result<Vec<HeadAt>> {
        let heads = HeadAt::parse_list(spec, self.default_head_place())?;
        for at in &heads {
            let info = self.info.place(at.place)?;
            Error::check_index("layer", at.layer, info.layers)?;
            Error::check_index("head", at.head, info.heads)?;
        }
        Ok(heads)
    }

    /// The model's output head, or an error naming what its files lack.
    pub(super) fn output_head(&self) -> Result<&OutputHead> {
        match self.net.unembed() {
            Some(unembed) => unembed.head(&self.info.architecture),
            None => Err(Error::NoOutputHead {
                architecture: self.info.architecture.clone(),
                missing: "an output head: the toy model is untrained and has none".into(),
            }),
        }
    }

    /// The edits that turn `heads` off in runs of `request`: zeros, or each head's mean output
    /// over the request's real tokens in a run without them off.
    pub fn ablation(&self, request: &Request, heads: &[HeadAt], how: Ablation) -> Result<HeadEdits> {
        if how == Ablation::Zero || heads.is_empty() {
            return Ok(HeadEdits::zero(heads));
        }
        let run = self.run_batch_of(request, Settings { store: Store::OnDemand, ..Settings::trained() })?;
        let edits = heads
            .iter()
            .map(|&at| {
                let place = run.place(at.place)?;
                let d = place.d_k;
                let (mut sum, mut count) = (Array1::<f32>::zeros(d), 0usize);
                for row in &place.rows {
                    let z = row.head_outputs(at.layer)?; // (Tq, H·d_k)
                    for (t, valid) in row.query_valid.iter().enumerate() {
                        if *valid {
                            sum += &z.slice(s![t, at.head * d..(at.head + 1) * d]);
                            count += 1;
                        }
                    }
                }
                Ok((at, HeadEdit::Constant(std::sync::Arc::new(sum / count.max(1) as f32))))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(HeadEdits::new(edits))
    }

    /// Runs `request` with `settings`, its texts and targets checked and padded as
    /// [`Model::run`] does, the request's own place and mask choices aside.
    pub(super) fn run_batch_of(&self, request: &Request, settings: Settings) -> Result<Run> {
        let plain = Request { texts: request.texts.clone(), targets: request.targets.clone(), ..Request::default() };
        self.run_with_settings(&plain, settings)
    }

    /// The top `options.top_k` tokens at every position of every text, the heads
    /// `options.ablate` names off, and the logit lens when asked.
    pub fn predict(&self, request: &Request, options: &PredictOptions) -> Result<Predictions> {
        let head = self.output_head()?;
        let edits = self.ablation(request, &options.ablate, options.ablation)?;
        let settings =
            Settings { edits, residuals: options.lens.is_some(), store: Store::OnDemand, ..Settings::trained() };
        let run = self.run_batch_of(request, settings)?;
        self.predictions_from(&run, head, (None, options.top_k, options.lens), options.ablation)
    }

    /// The top `top_k` tokens at every position of a run made with [`Request::output`] — of
    /// batch row `row` alone, or of every row — read from the output it kept instead of running
    /// again: the same numbers as [`Model::predict`] of its texts with its heads off. No lens:
    /// that needs every layer's residual stream.
    pub fn predictions_of(&self, run: &Run, row: Option<usize>, top_k: usize) -> Result<Predictions> {
        if let Some(r) = row {
            Error::check_index("row", r, run.batch())?;
        }
        self.predictions_from(run, self.output_head()?, (row, top_k, None), run.edits.ablation())
    }

    fn predictions_from(
        &self,
        run: &Run,
        head: &OutputHead,
        (only, top_k, lens): (Option<usize>, usize, Option<Option<usize>>),
        ablation: Ablation,
    ) -> Result<Predictions> {
        let place = run.places.last().ok_or(Error::EmptyText)?; // the decoder's, or the encoder's
        let rows = run
            .hidden
            .iter()
            .zip(&place.rows)
            .enumerate()
            .filter(|&(at, _)| only.is_none_or(|r| r == at))
            .map(|(_, (hidden, row))| {
                // an encoder–decoder's head reads its decoder's output, never its encoder's
                let h = match self.info.encoder_decoder {
                    true => hidden.decoder.as_ref(),
                    false => hidden.decoder.as_ref().or(hidden.encoder.as_ref()),
                };
                let h = h.ok_or(Error::NeedsModel)?; // (T, D)
                let logits = head.logits(h.view())?; // (T, V)
                let probs: Vec<Option<Softmax>> = logits
                    .rows()
                    .into_iter()
                    .zip(&row.query_valid)
                    .map(|(l, &valid)| valid.then(|| Softmax::of(l)))
                    .collect();
                let predictions = probs.iter().map(|p| p.as_ref().map(|p| self.candidates(p.top(top_k)))).collect();
                let lens = match lens {
                    Some(at) => {
                        let tops: Vec<Option<u32>> = probs
                            .iter()
                            .map(|p| p.as_ref().and_then(|p| p.top(1).first().map(|&(id, _)| id)))
                            .collect();
                        Some(self.lens(&hidden.residuals, &tops, at)?)
                    }
                    None => None,
                };
                Ok(RowPredictions { tokens: shown(&row.queries), predictions, lens })
            })
            .collect::<Result<_>>()?;
        Ok(Predictions {
            format: "headmap.predictions",
            version: 1,
            model_type: self.info.architecture.clone(),
            ablated: run.edits.heads().map(|at| at.name()).collect(),
            ablation,
            rows,
        })
    }

    /// The lens over `residuals` (one (T, D) per layer) at position `at` or all, against the
    /// last layer's top token at each position, `last` (`None` at PAD). One position's rows of
    /// every layer go through the head as one product: the head's matrix is read once, not
    /// once per layer.
    fn lens(
        &self,
        residuals: &[Array2<f32>],
        last: &[Option<u32>],
        at: Option<usize>,
    ) -> Result<Vec<Vec<Option<LensGuess>>>> {
        let unembed = self.net.unembed().ok_or(Error::NeedsModel)?;
        let guess = |l: ndarray::ArrayView1<f32>, t: usize| -> Option<LensGuess> {
            let final_top = last[t]?;
            let p = Softmax::of(l);
            let top = self.candidates(p.top(1)).pop()?;
            Some(LensGuess { top, p_final: p.p(final_top) })
        };
        if let Some(t) = at {
            Error::check_index("position", t, last.len())?;
            let rows: Vec<_> = residuals.iter().map(|r| r.slice(s![t..t + 1, ..])).collect();
            let stacked = ndarray::concatenate(ndarray::Axis(0), &rows).map_err(|_| Error::NeedsModel)?; // (L, D)
            let logits = unembed.lens(&self.info.architecture, stacked.view())?; // (L, V)
            return Ok(logits
                .rows()
                .into_iter()
                .map(|l| {
                    let mut guesses = vec![None; last.len()];
                    guesses[t] = guess(l, t);
                    guesses
                })
                .collect());
        }
        residuals
            .iter()
            .map(|r| {
                let logits = unembed.lens(&self.info.architecture, r.view())?; // (T, V)
                Ok(logits.rows().into_iter().enumerate().map(|(t, l)| guess(l, t)).collect())
            })
            .collect()
    }

    fn candidates(&self, best: Vec<(u32, f32)>) -> Vec<Candidate> {
        best.into_iter()
            .map(|(id, p)| Candidate { id, token: self.tokenizer.piece(id).unwrap_or_default(), p })
            .collect()
    }

    /// `word` as one token id, or an error showing the tokens it is.
    pub fn one_token(&self, word: &str) -> Result<u32> {
        let encoded = self.tokenizer.encode(word)?;
        let text: Vec<(u32, &Token)> =
            encoded.ids.iter().copied().zip(&encoded.tokens).filter(|(_, t)| t.kind != TokenKind::Special).collect();
        match text[..] {
            [(id, _)] => Ok(id),
            _ => Err(Error::AnswerNotOneToken {
                word: word.to_string(),
                tokens: text.iter().map(|(_, t)| t.piece.clone()).collect(),
            }),
        }
    }
}

/// Tokens as a reader is shown them.
pub(super) fn shown(tokens: &[Token]) -> Vec<String> {
    tokens.iter().map(|t| t.label.clone()).collect()
}
