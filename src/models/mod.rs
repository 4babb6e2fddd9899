//! Models whose attention headmap shows, behind one interface: [`Model`].
//!
//! A model is a tokenizer and a network (`network`). The toy Transformer (`toy`) and, with
//! the `hf` feature, the Hugging Face families as they are published are networks: each runs a
//! padded batch of token rows and records the attention of the places it has. Everything
//! around that — tokenizing, padding, feeding an encoder–decoder's decoder, what-if masks,
//! limits, traces — is done once, here.
//!
//! Each family has one file under `families` (`bert`, `roberta`, `distilbert`, `electra`,
//! `gpt2`, `gpt_neo`, `gpt_neox`, `llama`, `bart`, `t5`) whose loader reads its config and
//! weights into one of three shared networks: `encoder_only`, `decoder_only` (on `pre_norm` blocks) and
//! `encoder_decoder` (BART's post-LN `transformer` layers, T5's `pre_norm` blocks). The
//! families use `config` (a leaf), `weights` and `rope`; `registry` names each `model_type`'s
//! loader, and only `hf`, which reads a model's files, asks it.

use crate::attention::multi_head::HeadTrace;
use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::tokenize::{Encoded, Token, TokenKind, Tokenizer};

#[cfg(feature = "hf")]
pub mod head;
pub(crate) mod network;
#[cfg(feature = "hf")]
pub mod patch;
#[cfg(feature = "hf")]
pub mod predict;
pub mod toy;
pub mod transformer;

#[cfg(feature = "hf")]
pub mod config;
#[cfg(feature = "hf")]
pub(crate) mod decoder_only;
#[cfg(feature = "hf")]
pub(crate) mod decoding;
#[cfg(feature = "hf")]
pub(crate) mod encoder_decoder;
#[cfg(feature = "hf")]
pub(crate) mod encoder_only;
#[cfg(feature = "hf")]
pub mod families;
#[cfg(feature = "hf")]
pub mod generate;
#[cfg(feature = "hf")]
pub mod hf;
#[cfg(feature = "hf")]
pub(crate) mod pre_norm;
#[cfg(feature = "hf")]
pub mod registry;
#[cfg(feature = "hf")]
pub mod rope;
#[cfg(feature = "hf")]
mod sampling;
#[cfg(feature = "hf")]
pub mod weights;

use crate::run::{self, check_size, Batch, ModelInfo, Request, Row, RowAttention, Run, Settings, Store};
use network::{Network, NetworkInfo};

/// The most sentences in one padded batch.
pub const MAX_BATCH: usize = 8;

/// A model: its tokenizer and network, and the one way to run either.
pub struct Model {
    info: ModelInfo,
    tokenizer: Tokenizer,
    net: Box<dyn Network>,
    /// The padding token's id and how it is shown.
    pad: (u32, Token),
    /// The tokens that end a text the model writes (`eos_token_id`, one or a list).
    #[cfg_attr(not(feature = "hf"), allow(dead_code))]
    eos: Vec<u32>,
}

/// An encoder–decoder model's own output for a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// Decoder ids, start token first.
    pub ids: Vec<u32>,
    /// The decoded text, special tokens left out: usable as the target.
    pub text: String,
}

impl Model {
    fn new(tokenizer: Tokenizer, net: Box<dyn Network>, pad_id: u32, trained: bool) -> Self {
        let NetworkInfo { architecture, places, d_model, max_tokens, decoder_start } = net.info().clone();
        let encoder_decoder = places.iter().any(|p| p.place == Place::Cross);
        let pad_piece = tokenizer.piece(pad_id).unwrap_or_else(|| "[PAD]".to_string());
        let info = ModelInfo {
            architecture,
            trained,
            can_generate: encoder_decoder && decoder_start.is_some(),
            encoder_decoder,
            places,
            max_tokens,
            max_batch: MAX_BATCH,
            d_model,
        };
        Model { info, tokenizer, net, pad: (pad_id, Token::marker(&pad_piece, TokenKind::Pad)), eos: Vec::new() }
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The id an encoder–decoder's decoder starts from, when it has one.
    pub fn decoder_start(&self) -> Option<u32> {
        self.net.info().decoder_start
    }

    /// `text` as the model tokenizes it, refused when longer than the model allows.
    pub fn tokenize(&self, text: &str) -> Result<Encoded> {
        let encoded = self.tokenizer.encode(text)?;
        if encoded.ids.len() > self.info.max_tokens {
            return Err(Error::TooLong { tokens: encoded.ids.len(), max: self.info.max_tokens });
        }
        Ok(encoded)
    }

    /// Tokenizes, pads and runs `request`: every kept place's weights and the last hidden
    /// states.
    pub fn run(&self, request: &Request) -> Result<Run> {
        self.run_with(request, true)
    }

    /// The same run for the attention weights alone, what a view draws: a stack whose output
    /// nothing else reads stops at its last layer's weights (no V, W_O or feed-forward there),
    /// and [`Run::hidden`] holds `None` for it. Traces and on-demand layers are unchanged. With
    /// `request.output`, a model with an output head runs to the end and keeps its output, for
    /// [`Model::predictions_of`].
    pub fn run_weights(&self, request: &Request) -> Result<Run> {
        #[cfg(feature = "hf")]
        if request.output && self.output_head().is_ok() {
            return self.run_with(request, true);
        }
        self.run_with(request, false)
    }

    fn run_with(&self, request: &Request, hidden: bool) -> Result<Run> {
        // a run through one layer gives no output: nothing after that layer is computed
        let hidden = hidden && request.through_layer.is_none();
        let settings = Settings { hidden, through: request.through_layer, ..self.settings(request)? };
        self.run_with_settings(request, settings)
    }

    /// Checks, tokenizes and pads `request`'s texts and targets and runs them with `settings`.
    fn run_with_settings(&self, request: &Request, settings: Settings) -> Result<Run> {
        if request.texts.len() > MAX_BATCH {
            return Err(Error::BatchTooLarge { texts: request.texts.len(), max: MAX_BATCH });
        }
        if request.texts.is_empty() {
            return Err(Error::EmptyText);
        }
        if !request.targets.is_empty() && request.targets.len() != request.texts.len() {
            return Err(Error::TargetsMismatch { targets: request.targets.len(), texts: request.texts.len() });
        }
        let sources = self.pad_batch(&request.texts)?;
        let targets = if self.info.encoder_decoder {
            let texts = if request.targets.is_empty() { &request.texts } else { &request.targets };
            let rows = self.pad_batch(texts)?;
            match self.net.info().decoder_start {
                Some(start) => {
                    let piece = self.tokenizer.piece(start).unwrap_or_else(|| "<start>".to_string());
                    let start_token = Token::marker(&piece, TokenKind::Special);
                    rows.iter().map(|row| row.shift_right(start, &start_token)).collect()
                }
                None => rows,
            }
        } else {
            Vec::new()
        };
        let mut run = self.run_batch(&Batch { sources, targets }, &settings)?;
        if request.through_layer.is_some() {
            run.places.iter_mut().flat_map(|p| p.rows.iter_mut()).for_each(RowAttention::keep_computed_layers);
        }
        Ok(run)
    }

    /// Runs rows of ids as given (already padded, targets already shifted), none longer than
    /// the model reads. A run whose weights fit in [`run::KEEP_ALL_BYTES`] keeps them all; a
    /// larger one keeps each layer's inputs and recomputes a layer's weights when asked, unless
    /// `settings.store` says.
    pub fn run_batch(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        let max = self.info.max_tokens;
        if let Some(row) = batch.sources.iter().chain(&batch.targets).find(|r| r.ids.len() > max) {
            return Err(Error::TooLong { tokens: row.ids.len(), max });
        }
        let (mut weights, mut largest_layer) = (0usize, 0usize);
        for info in self.info.places.iter().filter(|p| settings.keeps(p.place)) {
            let (queries, keys) = match info.place {
                Place::EncoderSelf => (&batch.sources, &batch.sources),
                Place::DecoderSelf if !self.info.encoder_decoder => (&batch.sources, &batch.sources),
                Place::DecoderSelf => (&batch.targets, &batch.targets),
                Place::Cross => (&batch.targets, &batch.sources),
            };
            let (tq, tk) = (queries.first().map_or(0, |r| r.ids.len()), keys.first().map_or(0, |r| r.ids.len()));
            let per_layer = info.heads.saturating_mul(tq).saturating_mul(tk);
            largest_layer = largest_layer.max(per_layer);
            weights = weights.saturating_add(per_layer.saturating_mul(info.layers).saturating_mul(queries.len()));
        }
        // what must exist at once is one layer of one row
        check_size(largest_layer)?;
        let store = match settings.store {
            Store::Auto if weights.saturating_mul(4) <= run::KEEP_ALL_BYTES => Store::All,
            Store::Auto => Store::OnDemand,
            chosen => chosen,
        };
        let settings = Settings { store, ..settings.clone() };
        let run = crate::par::beside(|| self.net.forward(batch, &settings))?;
        Ok(Run { edits: settings.edits.clone(), ..run })
    }

    /// Checks the request's place and mask against the model.
    fn settings(&self, request: &Request) -> Result<Settings> {
        let place = match (request.place, request.mask) {
            (Some(place), _) => Some(self.info.place(place)?),
            // a mask alone: the place trained with it, else the model's first
            (None, Some(mask)) => self.info.places.iter().find(|p| p.mask == mask).or(self.info.places.first()),
            (None, None) => None,
        };
        let mut settings = Settings { scale_scores: request.scale.unwrap_or(true), ..Settings::trained() };
        #[cfg(feature = "hf")]
        if let Some(spec) = &request.ablate {
            settings.edits = self.ablation(request, &self.heads(spec)?, request.ablation)?;
        }
        settings.thumbs.clone_from(&request.thumbs);
        if let Some(info) = place {
            settings.keep = vec![info.place];
            let mask = request.mask.unwrap_or(info.mask);
            info.place.check(mask)?;
            if mask != info.mask {
                settings.what_if = Some((info.place, mask));
            }
        }
        Ok(settings)
    }

    fn pad_batch(&self, texts: &[String]) -> Result<Vec<Row>> {
        let encoded = texts.iter().map(|t| self.tokenize(t)).collect::<Result<Vec<_>>>()?;
        Ok(Row::pad_batch(encoded, self.pad.0, &self.pad.1))
    }

    /// Every step of one head, recomputed from the block and inputs that made `run`.
    pub fn trace(&self, run: &Run, place: Place, row: usize, layer: usize, head: usize) -> Result<HeadTrace> {
        run.place(place)?.row(row)?.trace(layer, head)
    }

    /// The greedy text the model writes from `text`, as transformers'
    /// `generate(num_beams=1, do_sample=False)` writes it: an encoder–decoder's target (what
    /// the page suggests as the decoder's input), a decoder-only model's continuation.
    #[cfg(feature = "hf")]
    pub fn generate(&self, text: &str, max_new_tokens: usize) -> Result<Generated> {
        let request = generate::GenerateRequest { prompt: text.into(), max_new_tokens, ..Default::default() };
        let g = self.generate_text(&request, |_| true)?;
        Ok(Generated { ids: g.ids, text: g.text })
    }

    /// Only real models write: the toy is untrained and has no output head.
    #[cfg(not(feature = "hf"))]
    pub fn generate(&self, _text: &str, _max_new_tokens: usize) -> Result<Generated> {
        Err(Error::CannotGenerate { architecture: self.info.architecture.clone() })
    }

    /// The toy Transformer (see [`toy`]).
    pub fn toy(config: toy::ToyConfig) -> Result<Self> {
        Ok(Model::new(Tokenizer::Words, Box::new(toy::ToyNet::new(config)?), 0, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::{Request, Run, Store};

    fn request(texts: &[&str], targets: &[&str], place: Option<Place>) -> Request {
        let owned = |v: &[&str]| v.iter().map(|t| t.to_string()).collect();
        Request { texts: owned(texts), targets: owned(targets), place, ..Request::default() }
    }

    /// Every weight, maximum and trace of `weights_only` equals `full`'s, bit for bit.
    fn assert_same_attention(model: &Model, full: &Run, weights_only: &Run, label: &str) {
        assert_eq!(full.places.len(), weights_only.places.len(), "{label}: places");
        for (a, b) in full.places.iter().zip(&weights_only.places) {
            for (row, (ra, rb)) in a.rows.iter().zip(&b.rows).enumerate() {
                let what = format!("{label}: {} row {row}", a.place.name());
                assert_eq!(ra.weights().unwrap(), rb.weights().unwrap(), "{what}: weights");
                assert_eq!(ra.maxima().unwrap(), rb.maxima().unwrap(), "{what}: maxima");
                let last = ra.layers() - 1;
                let (ta, tb) =
                    (model.trace(full, a.place, row, last, 1), model.trace(weights_only, b.place, row, last, 1));
                assert_eq!(ta.unwrap(), tb.unwrap(), "{what}: the last layer's trace, recomputed from its inputs");
            }
        }
    }

    #[test]
    fn a_weights_only_run_skips_the_last_layers_output_and_nothing_a_view_shows() {
        let model = Model::toy(toy::ToyConfig::small(3)).unwrap();
        let texts = ["동물이 길을 건너지 않았다.", "민수가 책을 주었다."];
        // the encoder alone: its last layer stops at the weights, no hidden state
        let only_encoder = request(&texts, &[], Some(Place::EncoderSelf));
        let (full, lean) = (model.run(&only_encoder).unwrap(), model.run_weights(&only_encoder).unwrap());
        assert_same_attention(&model, &full, &lean, "encoder_self");
        assert!(full.hidden.iter().all(|h| h.encoder.is_some()), "a full run gives the encoder output");
        assert!(lean.hidden.iter().all(|h| h.encoder.is_none() && h.decoder.is_none()), "weights only: none");
        // every place: cross-attention reads the whole encoder output, so only the decoder stops
        let all = request(&texts, &["a b c", "d e"], None);
        let (full, lean) = (model.run(&all).unwrap(), model.run_weights(&all).unwrap());
        assert_same_attention(&model, &full, &lean, "every place");
        assert_eq!(
            lean.hidden.iter().map(|h| h.encoder.clone()).collect::<Vec<_>>(),
            full.hidden.iter().map(|h| h.encoder.clone()).collect::<Vec<_>>(),
            "the encoder ran to its output for the cross-attention"
        );
        assert!(lean.hidden.iter().all(|h| h.decoder.is_none()));
        // the decoder's self-attention alone stops before its last cross-attention
        let decoder_self = request(&texts, &["a b c", "d e"], Some(Place::DecoderSelf));
        let (full, lean) = (model.run(&decoder_self).unwrap(), model.run_weights(&decoder_self).unwrap());
        assert_same_attention(&model, &full, &lean, "decoder_self");
    }

    #[test]
    fn weights_only_recomputes_layers_on_demand_like_a_full_run() {
        let model = Model::toy(toy::ToyConfig::small(4)).unwrap();
        let batch = Batch {
            sources: model.pad_batch(&["그것은 너무 피곤했다.".to_string()]).unwrap(),
            targets: model.pad_batch(&["a b".to_string()]).unwrap(),
        };
        let on_demand = Settings { store: Store::OnDemand, ..Settings::trained() };
        let full = model.run_batch(&batch, &on_demand).unwrap();
        let lean = model.run_batch(&batch, &Settings { hidden: false, ..on_demand }).unwrap();
        assert!(!lean.places[0].rows[0].keeps_weights());
        assert_same_attention(&model, &full, &lean, "on demand");
    }

    #[test]
    fn rows_given_as_ids_are_held_to_the_models_length_like_texts() {
        let model = Model::toy(toy::ToyConfig::small(1)).unwrap();
        let row = |n: usize| Row { ids: vec![0; n], tokens: vec![Token::word("a"); n], valid: vec![true; n] };
        let max = model.info.max_tokens;
        let long = Batch { sources: vec![row(3)], targets: vec![row(max + 1)] };
        assert_eq!(model.run_batch(&long, &Settings::trained()).err(), Some(Error::TooLong { tokens: max + 1, max }));
        let long = Batch { sources: vec![row(max + 2)], targets: vec![row(3)] };
        assert_eq!(model.run_batch(&long, &Settings::trained()).err(), Some(Error::TooLong { tokens: max + 2, max }));
    }

    /// A tiny model of `tests/fixtures/hf/{name}`, as transformers saved it.
    #[cfg(all(feature = "hf", not(target_arch = "wasm32")))]
    pub(crate) fn fixture(name: &str) -> Model {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hf").join(name);
        let read = |f: &str| std::fs::read(dir.join(f)).unwrap();
        let (config, weights, tokenizer) = (read("config.json"), read("model.safetensors"), read("tokenizer.json"));
        let files =
            hf::ModelFiles { config: &config, weights: &weights, tokenizer: Some(&tokenizer), ..Default::default() };
        Model::from_files(&files).unwrap()
    }

    #[cfg(all(feature = "hf", not(target_arch = "wasm32")))]
    #[test]
    fn real_models_give_the_same_weights_from_a_weights_only_run() {
        for (name, targets) in [("bert", &[][..]), ("bart", &["a short target", "another one"][..])] {
            let model = fixture(name);
            let r = request(&["The animal did not cross the street.", "It was tired."], targets, None);
            let (full, lean) = (model.run(&r).unwrap(), model.run_weights(&r).unwrap());
            assert_same_attention(&model, &full, &lean, name);
            assert!(lean.hidden.iter().all(|h| h.decoder.is_none()), "{name}: no last hidden state");
        }
    }

    /// The pre-norm stacks stop where the post-LN ones do: T5 in every place alone and all,
    /// the decoder-only families (GPT-Neo's with a windowed layer).
    #[cfg(all(feature = "hf", not(target_arch = "wasm32")))]
    #[test]
    fn pre_norm_models_give_the_same_weights_from_a_weights_only_run() {
        for name in ["t5", "t5-v1_1", "gpt2", "gpt_neo", "gpt_neox", "llama"] {
            let model = fixture(name);
            let places = model.info.places.iter().map(|p| Some(p.place));
            let asked: Vec<Option<Place>> =
                if model.info.encoder_decoder { [None].into_iter().chain(places).collect() } else { vec![None] };
            let texts = ["민수가 영희에게 책을 주었다.", "It was tired."];
            for place in asked {
                let r = request(&texts, &["a short target", "another one"], place);
                let (full, lean) = (model.run(&r).unwrap(), model.run_weights(&r).unwrap());
                let label = format!("{name} {place:?}");
                assert_same_attention(&model, &full, &lean, &label);
                assert!(lean.hidden.iter().all(|h| h.decoder.is_none()), "{label}: no decoder output");
                // an encoder whose output cross-attention reads runs whole
                let stopped = place == Some(Place::EncoderSelf) || !model.info.encoder_decoder;
                assert!(lean.hidden.iter().all(|h| h.encoder.is_none() == stopped), "{label}: encoder output");
            }
        }
    }
}
