//! Text the model writes, token by token, over its KV cache ([`super::decoding`]):
//!
//! ```text
//! prompt → one step over all its tokens (the cache filled)
//! then, until EOS (kept) or max_new_tokens:
//!     logits of the last position → the next token (greedy: the most likely;
//!     sampling: ÷ temperature, the top k, the top p, a seeded draw) → one step over it alone
//! ```
//!
//! A decoder-only model continues its prompt; an encoder–decoder encodes the prompt once and
//! writes its target from the decoder start token. Every step keeps the attention of the
//! position that wrote the token — in every layer and head, and cross-attention's over the
//! source — so a generated text's run can be drawn as it is written; [`Model::generated_run`]
//! is the run of the whole text like any other.

use ndarray::{Array2, Array3};
use serde::Serialize;

use super::decoding::{DecoderState, StepRows};
use super::head::{softmax, Candidate};
use super::predict::shown;
pub use super::sampling::Sampling;
use super::sampling::{greedy, sample};
use super::Model;
use crate::error::{Error, Result};
use crate::rng::SplitMix64;
use crate::run::{Ablation, Batch, Request, Row, Run, Settings};

/// What [`Model::generate_text`] is asked.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GenerateRequest {
    /// A decoder-only model's text to continue; an encoder–decoder's source.
    pub prompt: String,
    pub max_new_tokens: usize,
    /// `None`: greedy, the most likely token at every step.
    pub sampling: Option<Sampling>,
    /// Heads turned off while it writes (`L.H`, as for predictions), and how.
    pub ablate: Option<String>,
    pub ablation: Ablation,
}

/// One token the model wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Written {
    #[serde(flatten)]
    pub token: Candidate,
    /// Its attention: the rows of the position that wrote it, per layer (H, Tk) — the decoder's
    /// self-attention over every token before it, and an encoder–decoder's cross-attention.
    #[serde(skip)]
    pub rows: WrittenRows,
}

/// Per layer, each head's attention row of the position that wrote a token, (H, Tk).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WrittenRows {
    pub decoder: Vec<Array2<f32>>,
    pub cross: Vec<Array2<f32>>,
}

/// What [`Model::generate_text`] gives: the file `headmap generate` writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Generation {
    pub format: &'static str,
    pub version: u32,
    pub model_type: String,
    /// The prompt's tokens as a reader is shown them (an encoder–decoder's source).
    pub prompt: Vec<String>,
    pub generated: Vec<Written>,
    /// The decoded text: a decoder-only model's prompt and continuation, an encoder–decoder's
    /// target; special tokens left out.
    pub text: String,
    /// Why the text ends where it does: `end_token` (the model wrote its end), `max_new_tokens`
    /// (as many as were asked for), `positions` (the model's positions ran out first) or
    /// `stopped` (the caller stopped it, or it is still being written).
    pub ended: Ended,
    /// The heads turned off, as `place:layer.head`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ablated: Vec<String>,
    /// The ids the decoder read and wrote: a decoder-only model's prompt then its tokens, an
    /// encoder–decoder's start token then its tokens.
    #[serde(skip)]
    pub ids: Vec<u32>,
    /// Bytes the KV caches held at the end.
    #[serde(skip)]
    pub cache_bytes: usize,
}

/// Why a generated text ends where it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Ended {
    EndToken,
    MaxNewTokens,
    Positions,
    Stopped,
}

/// Text being written: the decoder's caches and what it has written so far. Each
/// [`Writer::step`] writes one token, so a page can draw it and stop between tokens.
pub struct Writer {
    request: GenerateRequest,
    settings: Settings,
    state: DecoderState,
    /// Tokens that end the text; the token the last step is forced to; tokens never written.
    stops: Vec<u32>,
    forced: Option<u32>,
    banned: Vec<u32>,
    /// What the decoder reads next: the prompt (or the start token), then each new token.
    input: Vec<u32>,
    ids: Vec<u32>,
    prompt: Vec<String>,
    generated: Vec<Written>,
    rng: Option<SplitMix64>,
    max_new: usize,
    /// Why the text ended, once it has.
    ended: Option<Ended>,
    done: bool,
}

impl Writer {
    /// Checks `request` against `model`, tokenizes the prompt and (in an encoder–decoder)
    /// encodes it.
    pub fn new(model: &Model, request: &GenerateRequest) -> Result<Self> {
        model.output_head().map_err(|e| match e {
            Error::NoOutputHead { .. } if !model.info.trained => {
                Error::CannotGenerate { architecture: model.info.architecture.clone() }
            }
            e => e,
        })?;
        if let Some(s) = &request.sampling {
            if !(s.temperature > 0.0 && s.temperature.is_finite()) {
                return Err(Error::BadTemperature { value: s.temperature });
            }
            if let Some(p) = s.top_p.filter(|p| !(*p > 0.0 && *p <= 1.0)) {
                return Err(Error::BadTopP { value: p });
            }
        }
        let encoded = model.tokenize(&request.prompt)?;
        if encoded.ids.is_empty() {
            return Err(Error::EmptyText);
        }
        let settings = model.generation_settings(request)?;
        let config = model.net.generation();
        let source =
            Row { valid: vec![true; encoded.ids.len()], ids: encoded.ids.clone(), tokens: encoded.tokens.clone() };
        let (state, ids) = match (model.info.encoder_decoder, model.net.info().decoder_start) {
            (true, Some(start)) => (model.net.start_decoding(Some(&source), &settings)?, vec![start]),
            (true, None) => return Err(Error::CannotGenerate { architecture: model.info.architecture.clone() }),
            (false, _) => (model.net.start_decoding(None, &settings)?, encoded.ids.clone()),
        };
        // the written text stays within the model's positions, so that it reads back whole —
        // opened in every view, saved, run again — as a decoder-only model's text or an
        // encoder–decoder's target after its start token
        let max = model.info.max_tokens;
        let room = max.saturating_sub(ids.len());
        if room == 0 && request.max_new_tokens > 0 {
            return Err(Error::NoRoomToWrite { tokens: ids.len(), max });
        }
        Ok(Writer {
            settings,
            state,
            stops: config.eos.into_iter().chain(model.eos.iter().copied()).collect(),
            forced: config.forced_eos,
            banned: config.banned,
            input: ids.clone(),
            ids,
            prompt: shown(&encoded.tokens),
            generated: Vec::new(),
            rng: request.sampling.map(|s| SplitMix64::new(s.seed)),
            max_new: request.max_new_tokens.min(room),
            ended: (request.max_new_tokens == 0).then_some(Ended::MaxNewTokens),
            done: request.max_new_tokens == 0,
            request: request.clone(),
        })
    }

    /// Writes the next token: `None` once the text has ended (its end token, the tokens
    /// asked for, or the model's positions).
    pub fn step(&mut self, model: &Model) -> Result<Option<&Written>> {
        if self.done {
            return Ok(None);
        }
        let head = model.output_head()?;
        let (state, input, settings) = (&mut self.state, &self.input, &self.settings);
        // on this thread, the pool's threads helping: a step's one row splits its products by
        // columns, the vocabulary's among them
        let (out, last, mut logits) = crate::par::beside(|| {
            let out = model.net.decode_step(state, input, settings)?;
            let last = out.hidden.nrows().checked_sub(1).ok_or(Error::EmptyText)?;
            let logits = head.logits_one(out.hidden.row(last))?; // (V,)
            Ok::<_, Error>((out, last, logits))
        })?;
        for &b in &self.banned {
            if let Some(l) = logits.get_mut(b as usize) {
                *l = f32::NEG_INFINITY;
            }
        }
        let probs = softmax(logits.view());
        let last_step = self.generated.len() + 1 == self.max_new;
        let forced_now = self.forced.is_some() && last_step;
        let next = match (self.forced, &self.request.sampling, self.rng.as_mut()) {
            (Some(forced), _, _) if last_step => forced,
            (_, Some(s), Some(rng)) => sample(logits.view(), s, rng),
            _ => greedy(logits.view()),
        };
        let token =
            Candidate { id: next, token: model.tokenizer.piece(next).unwrap_or_default(), p: probs[next as usize] };
        self.generated.push(Written { token, rows: last_rows(out.rows, last) });
        self.ids.push(next);
        self.input = vec![next];
        self.done = last_step || self.stops.contains(&next);
        // an end token the model chose ends the text itself, even on the last step; one forced
        // on the last step (Marian's) ends it by the count, or by the positions that ran out
        self.ended = self.done.then(|| {
            match (self.stops.contains(&next) && !forced_now, self.max_new < self.request.max_new_tokens) {
                (true, _) => Ended::EndToken,
                (false, true) => Ended::Positions,
                (false, false) => Ended::MaxNewTokens,
            }
        });
        Ok(self.generated.last())
    }

    /// The tokens the decoder has read, as a reader is shown them: the prompt (an
    /// encoder–decoder's start token) and every token written but the last.
    pub fn read(&self, model: &Model) -> Vec<String> {
        self.ids[..self.state.len()].iter().map(|&id| model.tokenizer.token_of(id).label).collect()
    }

    /// The prompt's tokens as a reader is shown them: an encoder–decoder's source.
    pub fn prompt(&self) -> &[String] {
        &self.prompt
    }

    /// Whether the text has ended.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Tokens written so far.
    pub fn written(&self) -> &[Written] {
        &self.generated
    }

    /// Bytes the KV caches hold now.
    pub fn cache_bytes(&self) -> usize {
        self.state.cache_bytes()
    }

    /// What layer `layer`'s cache keeps for query head `head`: its keys as the scores read them
    /// and its values, (T, d_k) each — the head's key/value head in grouped-query attention.
    pub fn kept(&self, model: &Model, layer: usize, head: usize) -> Result<(Array2<f32>, Array2<f32>)> {
        let info = model.info.place(model.default_head_place())?;
        Error::check_index("layer", layer, info.layers)?;
        Error::check_index("head", head, info.heads)?;
        let cache = &self.state.caches[layer].own;
        let d = info.d_k;
        let g = head / (info.heads / info.kv_heads.max(1)).max(1);
        let columns = ndarray::s![.., g * d..(g + 1) * d];
        Ok((cache.keys().slice(columns).to_owned(), cache.values().slice(columns).to_owned()))
    }

    /// Hands token `index`'s rows over, keeping none: a page that draws them holds the only
    /// copy (the rows of 512 tokens of SmolLM-135M's shape are ≈135 MB).
    pub fn take_rows(&mut self, index: usize) -> Result<WrittenRows> {
        Error::check_index("token", index, self.generated.len())?;
        Ok(std::mem::take(&mut self.generated[index].rows))
    }

    /// The text written, each token with its rows, as [`Model::generate_text`] gives it.
    pub fn finish(self, model: &Model) -> Result<Generation> {
        let text = self.text(model)?;
        let document = self.document(model, Vec::new());
        Ok(Generation { text, generated: self.generated, ..document })
    }

    /// The text so far, the writer kept for more: its tokens without their rows, which
    /// [`Writer::written`] and [`Writer::take_rows`] give.
    pub fn generation(&self, model: &Model) -> Result<Generation> {
        let tokens = self.generated.iter().map(|w| Written { token: w.token.clone(), rows: WrittenRows::default() });
        Ok(Generation { text: self.text(model)?, ..self.document(model, tokens.collect()) })
    }

    /// Why the text ends here: as its last step said, or stopped before it ended.
    fn ended(&self) -> Ended {
        self.ended.unwrap_or(Ended::Stopped)
    }

    /// The decoded text: an encoder–decoder's target, a decoder-only model's prompt and continuation.
    fn text(&self, model: &Model) -> Result<String> {
        match model.info.encoder_decoder {
            true => model.tokenizer.decode(&self.generated.iter().map(|w| w.token.id).collect::<Vec<_>>()),
            false => model.tokenizer.decode(&self.ids),
        }
    }

    fn document(&self, model: &Model, generated: Vec<Written>) -> Generation {
        Generation {
            format: "headmap.generation",
            version: 1,
            model_type: model.info.architecture.clone(),
            prompt: self.prompt.clone(),
            generated,
            text: String::new(),
            ended: self.ended(),
            ablated: self.settings.edits.heads().map(|at| at.name()).collect(),
            ids: self.ids.clone(),
            cache_bytes: self.state.cache_bytes(),
        }
    }
}

impl Model {
    /// Writes text from `request.prompt`, one token per step over the KV cache, until the
    /// model's end token (kept), `max_new_tokens`, or the model's positions run out;
    /// `on_token(written)` is told each token and stops the writing when it answers false
    /// (what was written is kept).
    pub fn generate_text(
        &self,
        request: &GenerateRequest,
        mut on_token: impl FnMut(&Written) -> bool,
    ) -> Result<Generation> {
        let mut writer = Writer::new(self, request)?;
        while let Some(written) = writer.step(self)? {
            if !on_token(written) {
                break;
            }
        }
        writer.finish(self)
    }

    /// The run of a generated text, like any run of the model: its decoder over every token it
    /// read and wrote (an encoder–decoder's over the prompt), with the same heads off. What
    /// every view opens and an attention file saves; its rows equal the steps' own.
    pub fn generated_run(&self, request: &GenerateRequest, generation: &Generation) -> Result<Run> {
        let settings = self.generation_settings(request)?;
        let read = match self.info.encoder_decoder {
            // the last token written is never read back
            true => &generation.ids[..generation.ids.len().saturating_sub(1)],
            false => &generation.ids[..],
        };
        let row = Row {
            tokens: read.iter().map(|&id| self.tokenizer.token_of(id)).collect(),
            valid: vec![true; read.len()],
            ids: read.to_vec(),
        };
        let batch = match self.info.encoder_decoder {
            true => Batch { sources: self.pad_batch(std::slice::from_ref(&request.prompt))?, targets: vec![row] },
            false => Batch { sources: vec![row], targets: Vec::new() },
        };
        self.run_batch(&batch, &settings)
    }

    /// The trained settings, with `request`'s heads off (their mean over the prompt's tokens
    /// for mean-ablation).
    fn generation_settings(&self, request: &GenerateRequest) -> Result<Settings> {
        let mut settings = Settings::trained();
        if let Some(spec) = &request.ablate {
            let run_request = Request { texts: vec![request.prompt.clone()], ..Request::default() };
            settings.edits = self.ablation(&run_request, &self.heads(spec)?, request.ablation)?;
        }
        Ok(settings)
    }
}

/// Row `last` of every layer's weights (H, n, T): the position that writes the next token.
fn last_rows(rows: StepRows, last: usize) -> WrittenRows {
    // copied out, so the prompt's step does not keep its whole (H, n, T) block for one row
    let pick = |w: Vec<Array3<f32>>| w.iter().map(|w| w.index_axis(ndarray::Axis(1), last).to_owned()).collect();
    WrittenRows { decoder: pick(rows.decoder), cross: pick(rows.cross) }
}
