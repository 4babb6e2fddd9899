//! A Hugging Face model as it is published — `config.json`, `model.safetensors` (or a sharded
//! checkpoint's index and shards) and a tokenizer — loaded with no conversion step into a
//! [`Model`], dispatched by `model_type` to its family's file.

use serde::Deserialize;

use super::bart::{Bart, BartConfig};
use super::bert::{Bert, BertConfig};
use super::config::{parse_config, TokenIds};
use super::distilbert::{DistilBert, DistilBertConfig};
use super::electra::{Electra, ElectraConfig};
use super::gpt2::{Gpt2, Gpt2Config};
use super::gpt_neo::{GptNeo, GptNeoConfig};
use super::gpt_neox::{GptNeoX, GptNeoXConfig};
use super::llama::{Llama, LlamaConfig};
use super::roberta::Roberta;
use super::t5::{T5Config, T5};
use super::weights::Weights;
use super::{Model, Network};
use crate::error::{Error, FileProblem, Result};
use crate::tokenize::hf::TextTokenizer;
use crate::tokenize::Tokenizer;

/// The `model_type`s headmap reads.
pub const SUPPORTED: [&str; 14] = [
    "bert",
    "roberta",
    "xlm-roberta",
    "distilbert",
    "electra",
    "gpt2",
    "gpt_neo",
    "gpt_neox",
    "llama",
    "qwen2",
    "mistral",
    "bart",
    "marian",
    "t5",
];

/// The files of one model, as bytes. A tokenizer comes as `tokenizer.json`, or for Marian as
/// `source.spm` with `vocab.json`. Weights come as `model.safetensors`, or as a sharded
/// checkpoint: `model.safetensors.index.json` and the shards it names.
#[derive(Default)]
pub struct ModelFiles<'a> {
    pub config: &'a [u8],
    /// `model.safetensors`; unused (may be empty) when `index` is given.
    pub weights: &'a [u8],
    pub tokenizer: Option<&'a [u8]>,
    pub source_spm: Option<&'a [u8]>,
    pub vocab: Option<&'a [u8]>,
    /// `model.safetensors.index.json` of a sharded checkpoint.
    pub index: Option<&'a [u8]>,
    /// The shards, by file name (`model-00001-of-00002.safetensors`; a folder before it is
    /// ignored).
    pub shards: Vec<(&'a str, &'a [u8])>,
}

#[derive(Deserialize)]
struct Probe {
    model_type: Option<String>,
}

impl Model {
    /// Loads a real model from its files, refusing a config that is malformed, unsupported or
    /// impossible with an error that names the file and the setting.
    pub fn from_files(files: &ModelFiles) -> Result<Self> {
        let probe: Probe = parse_config(files.config)?;
        let model_type = probe.model_type.ok_or_else(|| Error::file("config.json", FileProblem::NoModelType))?;
        let weights = match files.index {
            Some(index) => Weights::sharded(index, &files.shards)?,
            None => Weights::parse(files.weights, "model.safetensors")?,
        };
        let tokenizer = match (files.tokenizer, files.source_spm, files.vocab) {
            (Some(json), _, _) => TextTokenizer::from_json(json, "tokenizer.json")?,
            (None, Some(spm), Some(vocab)) => TextTokenizer::from_marian(spm, vocab)?,
            _ => return Err(Error::file("tokenizer", FileProblem::NoTokenizer)),
        };
        // the vocabulary is checked before any weight is read: a tokenizer that can give an
        // id outside the model's table would fail later, on some text, with a worse message
        let check_vocab = |vocab: usize, pad: u32| {
            if tokenizer.vocab_size() > vocab {
                let problem = FileProblem::VocabularyTooLarge { tokenizer: tokenizer.vocab_size(), model: vocab };
                return Err(Error::file("config.json", problem));
            }
            if pad as usize >= vocab {
                let problem = FileProblem::impossible("pad_token_id", pad, "it is outside the vocabulary");
                return Err(Error::file("config.json", problem));
            }
            Ok(pad)
        };
        let (net, pad): (Box<dyn Network>, u32) = match model_type.as_str() {
            "bert" => {
                let cfg: BertConfig = parse_config(files.config)?;
                let pad = check_vocab(cfg.vocab_size, cfg.pad_token_id.unwrap_or(0))?;
                (Box::new(Bert::load(weights, cfg)?), pad)
            }
            "roberta" | "xlm-roberta" => {
                let cfg: BertConfig = parse_config(files.config)?;
                let pad = check_vocab(cfg.vocab_size, cfg.pad_token_id.unwrap_or(1))?;
                (Box::new(Roberta::load(weights, cfg, &model_type)?), pad)
            }
            "distilbert" => {
                let cfg: DistilBertConfig = parse_config(files.config)?;
                let pad = check_vocab(cfg.vocab_size, cfg.pad_token_id.unwrap_or(0))?;
                (Box::new(DistilBert::load(weights, cfg)?), pad)
            }
            "electra" => {
                let cfg: ElectraConfig = parse_config(files.config)?;
                let pad = check_vocab(cfg.bert.vocab_size, cfg.bert.pad_token_id.unwrap_or(0))?;
                (Box::new(Electra::load(weights, cfg)?), pad)
            }
            // decoder-only models pad with their end-of-text token, as transformers' examples do
            "gpt2" => {
                let cfg: Gpt2Config = parse_config(files.config)?;
                let pad = check_vocab(cfg.vocab_size, cfg.eos_token_id.unwrap_or(0))?;
                (Box::new(Gpt2::load(weights, cfg)?), pad)
            }
            "gpt_neo" => {
                let cfg: GptNeoConfig = parse_config(files.config)?;
                let pad = check_vocab(cfg.vocab_size, cfg.eos_token_id.as_ref().map_or(0, TokenIds::first))?;
                (Box::new(GptNeo::load(weights, cfg)?), pad)
            }
            "gpt_neox" => {
                let cfg: GptNeoXConfig = parse_config(files.config)?;
                let pad = check_vocab(cfg.vocab_size, cfg.eos_token_id.as_ref().map_or(0, TokenIds::first))?;
                (Box::new(GptNeoX::load(weights, cfg)?), pad)
            }
            "llama" | "qwen2" | "mistral" => {
                let mut cfg: LlamaConfig = parse_config(files.config)?;
                cfg.model_type = model_type.clone();
                let pad = check_vocab(cfg.vocab_size, cfg.eos_token_id.as_ref().map_or(0, TokenIds::first))?;
                (Box::new(Llama::load(weights, cfg)?), pad)
            }
            "t5" => {
                let cfg: T5Config = parse_config(files.config)?;
                let pad = check_vocab(cfg.vocab_size, cfg.pad_token_id.unwrap_or(0))?;
                (Box::new(T5::load(weights, cfg)?), pad)
            }
            "bart" | "marian" => {
                let cfg: BartConfig = parse_config(files.config)?;
                let pad = check_vocab(cfg.vocab_size, cfg.pad_token_id.unwrap_or(1))?;
                (Box::new(Bart::load(weights, cfg)?), pad)
            }
            other => {
                let problem = FileProblem::UnsupportedModel {
                    model_type: other.to_string(),
                    supported: SUPPORTED.map(String::from).to_vec(),
                };
                return Err(Error::file("config.json", problem));
            }
        };
        Ok(Model::new(Tokenizer::Hf(Box::new(tokenizer)), net, pad, true))
    }
}
