//! A Hugging Face model as it is published — `config.json`, `model.safetensors` and a
//! tokenizer — loaded with no conversion step: BERT, GPT-2, BART and Marian families.

use ndarray::Array2;
use serde::Deserialize;

use super::bart::{Bart, BartConfig};
use super::bert::{Bert, BertConfig};
use super::gpt2::{Gpt2, Gpt2Config};
use super::run::{AttentionRun, Row};
use super::weights::Weights;
use crate::attention::mask::MaskKind;
use crate::attention::multi_head::HeadTrace;
use crate::error::{Error, Result};
use crate::tokenize::hf::{Encoded, TextTokenizer};

/// The files of one model, as bytes. A tokenizer comes as `tokenizer.json`, or for Marian as
/// `source.spm` with `vocab.json`.
#[derive(Default)]
pub struct ModelFiles<'a> {
    pub config: &'a [u8],
    pub weights: &'a [u8],
    pub tokenizer: Option<&'a [u8]>,
    pub source_spm: Option<&'a [u8]>,
    pub vocab: Option<&'a [u8]>,
}

enum Architecture {
    Bert(Bert),
    Gpt2(Gpt2),
    Bart(Bart),
}

/// A loaded model with its tokenizer.
pub struct HfModel {
    /// `model_type` from config.json: "bert", "gpt2", "bart", "marian", …
    pub model_type: String,
    arch: Architecture,
    tokenizer: TextTokenizer,
    pad: (u32, String),
}

/// Every attention place of one run, and the last hidden states.
pub struct HfRun {
    /// In the order of the seed's table: encoder self-attention, decoder masked
    /// self-attention, cross-attention (only those the model has).
    pub places: Vec<AttentionRun>,
    /// Per batch row: the encoder's (BERT, BART) or the decoder's (GPT-2) last hidden states.
    pub hidden: Vec<Array2<f32>>,
    /// Per batch row, an encoder–decoder model's decoder output.
    pub decoder_hidden: Vec<Array2<f32>>,
}

impl HfRun {
    pub fn place(&self, kind: MaskKind) -> Option<&AttentionRun> {
        self.places.iter().find(|p| p.kind == kind)
    }
}

#[derive(Deserialize)]
struct Probe {
    model_type: Option<String>,
}

impl HfModel {
    pub fn load(files: &ModelFiles) -> Result<Self> {
        let probe: Probe = parse_config(files.config)?;
        let model_type = probe.model_type.ok_or_else(|| Error::file("config.json", "it has no `model_type`"))?;
        let weights = Weights::parse(files.weights, "model.safetensors")?;
        let tokenizer = match (files.tokenizer, files.source_spm, files.vocab) {
            (Some(json), _, _) => TextTokenizer::from_json(json, "tokenizer.json")?,
            (None, Some(spm), Some(vocab)) => TextTokenizer::from_marian(spm, vocab)?,
            _ => {
                return Err(Error::file(
                    "tokenizer",
                    "missing: give tokenizer.json, or for Marian models source.spm and vocab.json",
                ))
            }
        };
        let (arch, pad_id) = match model_type.as_str() {
            "bert" => {
                let cfg: BertConfig = parse_config(files.config)?;
                let pad = cfg.pad_token_id.unwrap_or(0);
                (Architecture::Bert(Bert::load(weights, cfg)?), pad)
            }
            "gpt2" => {
                let cfg: Gpt2Config = parse_config(files.config)?;
                let pad = cfg.eos_token_id.unwrap_or(0);
                (Architecture::Gpt2(Gpt2::load(weights, cfg)?), pad)
            }
            "bart" | "marian" => {
                let cfg: BartConfig = parse_config(files.config)?;
                let pad = cfg.pad_token_id.unwrap_or(1);
                (Architecture::Bart(Bart::load(weights, cfg)?), pad)
            }
            other => {
                return Err(Error::file(
                    "config.json",
                    format!("model_type `{other}` is not supported: headmap reads bert, gpt2, bart and marian"),
                ))
            }
        };
        let pad_label = tokenizer.id_to_token(pad_id).unwrap_or_else(|| "[PAD]".to_string());
        Ok(HfModel { model_type, arch, tokenizer, pad: (pad_id, pad_label) })
    }

    /// The places this model uses attention, in the order of the seed's table.
    pub fn kinds(&self) -> Vec<MaskKind> {
        match self.arch {
            Architecture::Bert(_) => vec![MaskKind::Padding],
            Architecture::Gpt2(_) => vec![MaskKind::Causal],
            Architecture::Bart(_) => vec![MaskKind::Padding, MaskKind::Causal, MaskKind::Cross],
        }
    }

    pub fn is_encoder_decoder(&self) -> bool {
        matches!(self.arch, Architecture::Bart(_))
    }

    /// The most tokens one text may have: the model's `max_position_embeddings`.
    pub fn max_tokens(&self) -> usize {
        match &self.arch {
            Architecture::Bert(m) => m.max_tokens(),
            Architecture::Gpt2(m) => m.max_tokens(),
            Architecture::Bart(m) => m.max_tokens(),
        }
    }

    pub fn tokenizer(&self) -> &TextTokenizer {
        &self.tokenizer
    }

    /// Tokenizes and runs a padded batch. For an encoder–decoder model, `targets` (one per
    /// text, defaulting to the texts) are fed to the decoder as transformers does for labels:
    /// shifted right behind the decoder start token.
    pub fn run(&self, texts: &[&str], targets: &[&str]) -> Result<HfRun> {
        self.run_what_if(texts, targets, None)
    }

    /// Like [`HfModel::run`], with a self-attention mask the model was not trained with
    /// (`what_if`: none, padding or causal) for an encoder-only or decoder-only model, to see
    /// what the mask does. The weights are then the model's answer to a question it never met.
    pub fn run_what_if(&self, texts: &[&str], targets: &[&str], what_if: Option<MaskKind>) -> Result<HfRun> {
        if texts.is_empty() {
            return Err(Error::EmptyText);
        }
        let sources = self.encode_batch(texts)?;
        match &self.arch {
            Architecture::Bart(_) if what_if.is_some() => {
                Err(Error::setting("mask", "a what-if mask applies to encoder-only and decoder-only models"))
            }
            Architecture::Bart(m) => {
                let targets = if targets.is_empty() { texts } else { targets };
                let start = m.config.decoder_start_token_id.unwrap_or(self.pad.0);
                let start_label = self.tokenizer.id_to_token(start).unwrap_or_else(|| "<start>".into());
                // transformers' shift_tokens_right on the padded labels: start token first, the
                // last position dropped (so a shorter row keeps its </s>)
                let decoder: Vec<Row> = self
                    .encode_batch(targets)?
                    .into_iter()
                    .map(|row| Row {
                        ids: shift_right(start, &row.ids),
                        labels: shift_right(start_label.clone(), &row.labels),
                        valid: shift_right(true, &row.valid),
                    })
                    .collect();
                self.run_rows(&sources, &decoder)
            }
            _ => self.run_rows_what_if(&sources, &[], what_if),
        }
    }

    /// Runs rows of ids as given (already padded); `targets` are decoder inputs.
    pub fn run_rows(&self, sources: &[Row], targets: &[Row]) -> Result<HfRun> {
        self.run_rows_what_if(sources, targets, None)
    }

    fn run_rows_what_if(&self, sources: &[Row], targets: &[Row], what_if: Option<MaskKind>) -> Result<HfRun> {
        match &self.arch {
            Architecture::Bert(m) => {
                let (run, hidden) = m.forward(sources, what_if.unwrap_or(MaskKind::Padding))?;
                Ok(HfRun { places: vec![run], hidden, decoder_hidden: Vec::new() })
            }
            Architecture::Gpt2(m) => {
                let (run, hidden) = m.forward(sources, what_if.unwrap_or(MaskKind::Causal))?;
                Ok(HfRun { places: vec![run], hidden, decoder_hidden: Vec::new() })
            }
            Architecture::Bart(m) => {
                let r = m.forward(sources, targets)?;
                Ok(HfRun {
                    places: vec![r.encoder, r.decoder, r.cross],
                    hidden: r.encoder_hidden,
                    decoder_hidden: r.decoder_hidden,
                })
            }
        }
    }

    /// An encoder–decoder model's greedy continuation of `text` (see [`Bart::greedy`]):
    /// the decoded text, to use as the target.
    pub fn generate(&self, text: &str, max_new_tokens: usize) -> Result<(Vec<u32>, String)> {
        let Architecture::Bart(m) = &self.arch else {
            return Err(Error::setting(
                "model",
                format!("greedy decoding needs an encoder–decoder model, not {}", self.model_type),
            ));
        };
        let source = self.encode_batch(&[text])?.remove(0);
        let ids = m.greedy(&source, max_new_tokens.min(self.max_tokens().saturating_sub(1)))?;
        let text = self.tokenizer.decode(&ids)?;
        Ok((ids, text))
    }

    /// Every step of one head, recomputed from the block that made `run`.
    pub fn trace(&self, run: &AttentionRun, row: usize, layer: usize, head: usize) -> Result<HeadTrace> {
        run.check(row, layer)?;
        let block = match &self.arch {
            Architecture::Bert(m) => m.block(layer),
            Architecture::Gpt2(m) => m.block(layer),
            Architecture::Bart(m) => m.block(run.kind, layer),
        };
        let block = block.ok_or_else(|| Error::setting("layer", format!("layer {layer} does not exist")))?;
        run.trace(block, row, layer, head)
    }

    fn encode(&self, text: &str) -> Result<Encoded> {
        let enc = self.tokenizer.encode(text)?;
        if enc.ids.len() > self.max_tokens() {
            return Err(Error::TooLong { tokens: enc.ids.len(), max: self.max_tokens() });
        }
        Ok(enc)
    }

    fn encode_batch(&self, texts: &[&str]) -> Result<Vec<Row>> {
        let rows = texts.iter().map(|t| self.encode(t).map(|e| (e.ids, e.labels))).collect::<Result<Vec<_>>>()?;
        Ok(Row::pad_batch(rows, self.pad.0, &self.pad.1))
    }
}

/// `first`, then `rest` without its last item: the decoder's view of its labels.
fn shift_right<T: Clone>(first: T, rest: &[T]) -> Vec<T> {
    std::iter::once(first).chain(rest[..rest.len().saturating_sub(1)].iter().cloned()).collect()
}

fn parse_config<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| Error::file("config.json", format!("not valid JSON for this model ({e})")))
}
