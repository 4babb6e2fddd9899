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

use ndarray::{Array1, Array2, Array3, ArrayView1};
use serde::Serialize;

use super::decoding::{DecoderState, StepRows};
use super::head::{softmax, Candidate};
use super::predict::shown;
use super::Model;
use crate::error::{Error, Result};
use crate::rng::SplitMix64;
use crate::run::{Ablation, Batch, Request, Row, Run, Settings};

/// How the next token is drawn instead of taken greedily, as transformers' `generate(do_sample=True)`
/// warps the logits: temperature, then top-k, then top-p.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// Above 0: the logits are divided by it (below 1 sharper, above 1 flatter).
    pub temperature: f32,
    /// Only the k most likely tokens may be drawn; `None` (or 0) for all.
    pub top_k: Option<usize>,
    /// Only the smallest set of most likely tokens whose probabilities add up to p; in (0, 1].
    pub top_p: Option<f32>,
    /// The same seed draws the same tokens, natively, in wasm and on any number of threads.
    pub seed: u64,
}

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
        // the model's positions bound what it can read: the last token written is never read
        let room = model.info.max_tokens.saturating_sub(ids.len());
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
            max_new: request.max_new_tokens.min(room + 1),
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
        let out = model.net.decode_step(&mut self.state, &self.input, &self.settings)?;
        let last = out.hidden.nrows().checked_sub(1).ok_or(Error::EmptyText)?;
        let mut logits = head.logits_one(out.hidden.row(last))?; // (V,)
        for &b in &self.banned {
            if let Some(l) = logits.get_mut(b as usize) {
                *l = f32::NEG_INFINITY;
            }
        }
        let probs = softmax(logits.view());
        let last_step = self.generated.len() + 1 == self.max_new;
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

    /// The text so far, as [`Model::generate_text`] gives it.
    pub fn finish(self, model: &Model) -> Result<Generation> {
        self.generation(model)
    }

    /// The text so far, the writer kept for more.
    pub fn generation(&self, model: &Model) -> Result<Generation> {
        let written: Vec<u32> = self.generated.iter().map(|w| w.token.id).collect();
        let text = match model.info.encoder_decoder {
            true => model.tokenizer.decode(&written)?,
            false => model.tokenizer.decode(&self.ids)?,
        };
        Ok(Generation {
            format: "headmap.generation",
            version: 1,
            model_type: model.info.architecture.clone(),
            prompt: self.prompt.clone(),
            generated: self.generated.clone(),
            text,
            ablated: self.settings.edits.heads().map(|at| at.name()).collect(),
            ids: self.ids.clone(),
            cache_bytes: self.state.cache_bytes(),
        })
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
    let pick = |w: Vec<Array3<f32>>| w.into_iter().map(|w| w.index_axis_move(ndarray::Axis(1), last)).collect();
    WrittenRows { decoder: pick(rows.decoder), cross: pick(rows.cross) }
}

/// The most likely id, the lowest on a tie (torch's argmax).
fn greedy(logits: ArrayView1<f32>) -> u32 {
    let mut best = (0, f32::NEG_INFINITY);
    for (i, &l) in logits.iter().enumerate() {
        if l > best.1 {
            best = (i, l);
        }
    }
    best.0 as u32
}

/// A draw from `logits` warped as transformers warps them for sampling: ÷ temperature; only
/// the top k (every token tied with the k-th kept); only the smallest set of the most likely
/// whose probabilities reach top-p (at least one); then the softmax of what is left.
fn sample(logits: ArrayView1<f32>, s: &Sampling, rng: &mut SplitMix64) -> u32 {
    let scaled: Array1<f32> = logits.mapv(|l| l / s.temperature);
    let mut order: Vec<usize> = (0..scaled.len()).filter(|&i| scaled[i] > f32::NEG_INFINITY).collect();
    // most likely first; ties to the lower id, so the order never depends on the sort
    order.sort_by(|&a, &b| scaled[b].total_cmp(&scaled[a]).then(a.cmp(&b)));
    if let Some(k) = s.top_k.filter(|&k| k > 0 && k < order.len()) {
        let kth = scaled[order[k - 1]];
        order.retain(|&i| scaled[i] >= kth);
    }
    let kept: Array1<f32> = order.iter().map(|&i| scaled[i]).collect();
    let mut probs = softmax(kept.view());
    if let Some(p) = s.top_p.filter(|&p| p < 1.0) {
        let mut sum = 0.0f64;
        let keep = probs.iter().position(|&q| {
            sum += f64::from(q);
            sum >= f64::from(p)
        });
        let n = keep.map_or(order.len(), |i| i + 1).max(1);
        order.truncate(n);
        let kept: Array1<f32> = order.iter().map(|&i| scaled[i]).collect();
        probs = softmax(kept.view());
    }
    // a uniform number in [0, 1) from the top 53 bits, walked over the probabilities
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut sum = 0.0f64;
    for (&id, &q) in order.iter().zip(&probs) {
        sum += f64::from(q);
        if u < sum {
            return id as u32;
        }
    }
    order.last().copied().unwrap_or(0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_takes_the_first_of_equal_best() {
        assert_eq!(greedy(ndarray::arr1(&[0.0, 2.0, 2.0, -1.0]).view()), 1);
    }

    #[test]
    fn top_k_of_one_and_a_tiny_top_p_are_greedy() {
        let logits = ndarray::arr1(&[0.1, 3.0, 2.9, -1.0]);
        let mut rng = SplitMix64::new(7);
        for s in [
            Sampling { temperature: 1.0, top_k: Some(1), top_p: None, seed: 7 },
            Sampling { temperature: 1.0, top_k: None, top_p: Some(1e-6), seed: 7 },
        ] {
            for _ in 0..50 {
                assert_eq!(sample(logits.view(), &s, &mut rng), 1);
            }
        }
    }

    #[test]
    fn draws_follow_the_softmax() {
        // χ² over 20,000 draws of a four-token distribution: p > 0.01 at 3 degrees of freedom
        // means χ² < 11.34
        let logits = ndarray::arr1(&[0.0f32, 1.0, 2.0, -0.5]);
        let probs = softmax(logits.view());
        let s = Sampling { temperature: 1.0, top_k: None, top_p: None, seed: 42 };
        let mut rng = SplitMix64::new(s.seed);
        let n = 20_000;
        let mut counts = [0usize; 4];
        for _ in 0..n {
            counts[sample(logits.view(), &s, &mut rng) as usize] += 1;
        }
        let chi2: f64 = counts
            .iter()
            .zip(probs.iter())
            .map(|(&c, &p)| {
                let e = n as f64 * f64::from(p);
                (c as f64 - e).powi(2) / e
            })
            .sum();
        assert!(chi2 < 11.34, "χ² = {chi2}, counts {counts:?}, probabilities {probs:?}");
    }

    #[test]
    fn top_p_keeps_the_smallest_set_that_reaches_it() {
        // probabilities ≈ 0.64, 0.24, 0.09, 0.03: top-p 0.8 keeps the first two
        let logits = ndarray::arr1(&[3.0f32, 2.0, 1.0, 0.0]);
        let s = Sampling { temperature: 1.0, top_k: None, top_p: Some(0.8), seed: 1 };
        let mut rng = SplitMix64::new(1);
        let seen: std::collections::BTreeSet<u32> = (0..2000).map(|_| sample(logits.view(), &s, &mut rng)).collect();
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![0, 1]);
    }
}
