//! A Hugging Face model as it is published — `config.json`, `model.safetensors` (or a sharded
//! checkpoint's index and shards) and a tokenizer — loaded with no conversion step into a
//! [`Model`] by the loader the registry names for its `model_type`.

use serde::Deserialize;

use super::config::{parse_config, Loading};
use super::network::Loaded;
use super::registry;
use super::weights::Weights;
use super::Model;
use crate::error::{Error, FileProblem, Result};
use crate::tokenize::hf::TextTokenizer;
use crate::tokenize::Tokenizer;

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
    /// One id or a list (Llama 3); read loosely: a model without one writes until its limit.
    #[serde(default)]
    eos_token_id: serde_json::Value,
}

impl Probe {
    fn eos(&self) -> Vec<u32> {
        let id = |v: &serde_json::Value| v.as_u64().and_then(|n| u32::try_from(n).ok());
        match &self.eos_token_id {
            serde_json::Value::Array(ids) => ids.iter().filter_map(id).collect(),
            v => id(v).into_iter().collect(),
        }
    }
}

impl Model {
    /// Loads a real model from a folder as it comes from the Hub: config.json, model.safetensors
    /// (or model.safetensors.index.json and the shards it names) and tokenizer.json (or
    /// source.spm and vocab.json). What the command line and the Python package open; an error
    /// about a file names its path.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn from_dir(dir: &std::path::Path) -> Result<Self> {
        use super::weights::{base_name, shard_names, INDEX};
        // only regular files (a link to one, as in the Hub's cache, is one): a device or a
        // pipe in a model's place would be read without end
        let read = |name: &str| {
            let path = dir.join(name);
            let unreadable = |e: std::io::Error| match e.kind() {
                std::io::ErrorKind::NotFound => Error::file(name, FileProblem::Missing),
                _ => Error::file(name, FileProblem::Unreadable { reason: e.kind().to_string() }),
            };
            if !std::fs::metadata(&path).map_err(unreadable)?.is_file() {
                return Err(Error::file(name, FileProblem::Unreadable { reason: "not a regular file".into() }));
            }
            std::fs::read(path).map_err(unreadable)
        };
        let optional = |name: &str| dir.join(name).exists().then(|| read(name)).transpose();
        let load = || {
            let config = read("config.json")?;
            let index = optional(INDEX)?;
            let shard_files = match &index {
                Some(index) => shard_names(index)?,
                None => Vec::new(),
            };
            // a shard is read from the model's folder whatever folder the index puts before its
            // name, as the page matches shards by name: an index cannot point outside the folder
            let shards = shard_files.iter().map(|name| read(base_name(name))).collect::<Result<Vec<_>>>()?;
            let weights = if index.is_some() { Vec::new() } else { read("model.safetensors")? };
            let (tokenizer, source_spm, vocab) =
                (optional("tokenizer.json")?, optional("source.spm")?, optional("vocab.json")?);
            Model::from_files(&ModelFiles {
                config: &config,
                weights: &weights,
                tokenizer: tokenizer.as_deref(),
                source_spm: source_spm.as_deref(),
                vocab: vocab.as_deref(),
                index: index.as_deref(),
                shards: shard_files.iter().map(String::as_str).zip(shards.iter().map(Vec::as_slice)).collect(),
            })
        };
        // a file's problem names its path, as the reader typed the folder
        load().map_err(|e| match e {
            Error::File { file, problem } => Error::File { file: dir.join(file).display().to_string(), problem },
            e => e,
        })
    }

    /// Loads a real model from its files, refusing a config that is malformed, unsupported or
    /// impossible with an error that names the file and the setting.
    pub fn from_files(files: &ModelFiles) -> Result<Self> {
        let probe: Probe = parse_config(files.config)?;
        let model_type =
            probe.model_type.clone().ok_or_else(|| Error::file("config.json", FileProblem::NoModelType))?;
        let weights = match files.index {
            Some(index) => Weights::sharded(index, &files.shards)?,
            None => Weights::parse(files.weights, "model.safetensors")?,
        };
        let tokenizer = match (files.tokenizer, files.source_spm, files.vocab) {
            (Some(json), _, _) => TextTokenizer::from_json(json, "tokenizer.json")?,
            (None, Some(spm), Some(vocab)) => TextTokenizer::from_marian(spm, vocab)?,
            _ => return Err(Error::file("tokenizer", FileProblem::NoTokenizer)),
        };
        let load = registry::loader(&model_type).ok_or_else(|| {
            let supported = registry::model_types().map(String::from).collect();
            Error::file("config.json", FileProblem::UnsupportedModel { model_type: model_type.clone(), supported })
        })?;
        let loading =
            Loading { model_type: &model_type, config: files.config, weights, tokenizer_vocab: tokenizer.vocab_size() };
        let Loaded { net, pad } = load(loading)?;
        let mut model = Model::new(Tokenizer::Hf(Box::new(tokenizer)), net, pad, true);
        model.eos = probe.eos();
        Ok(model)
    }
}
