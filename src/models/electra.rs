//! ELECTRA's discriminator (`electra`: google/electra-*-discriminator, KoELECTRA), mirroring
//! transformers' `models/electra/modeling_electra.py`. BERT's layers and config; its
//! embeddings are narrower (`embedding_size` E) and, when E differs from the hidden size, an
//! `embeddings_project` layer widens them to D before the first layer.

use ndarray::Array2;
use serde::Deserialize;

use super::bert::{encode_rows, BertConfig};
use super::config::Loading;
use super::network::{Loaded, Network};
use super::run::{Batch, PlaceInfo, Run, Settings};
use super::transformer::EncoderLayer;
use super::weights::Weights;
use crate::error::Result;
use crate::nn::{self, LayerNorm, Linear};

/// `config.json` of an ELECTRA model: BERT's names plus `embedding_size`.
#[derive(Debug, Clone, Deserialize)]
pub struct ElectraConfig {
    #[serde(flatten)]
    pub bert: BertConfig,
    /// E, the width of the embeddings; the hidden size when absent.
    #[serde(default)]
    pub embedding_size: Option<usize>,
}

pub struct Electra {
    pub config: ElectraConfig,
    word: Array2<f32>,         // (V, E) embeddings.word_embeddings
    position: Array2<f32>,     // (P, E) embeddings.position_embeddings
    token_type: Array2<f32>,   // (types, E) embeddings.token_type_embeddings
    embedding_norm: LayerNorm, // (E,)
    project: Option<Linear>,   // (E, D) embeddings_project, when E ≠ D
    layers: Vec<EncoderLayer>, // encoder.layer.N
}

impl Electra {
    fn load(w: Weights, config: ElectraConfig) -> Result<Self> {
        let c = &config.bert;
        c.check()?;
        let d = c.hidden_size;
        let e = config.embedding_size.unwrap_or(d);
        super::config::check_sizes(&[("embedding_size", e)])?;
        let w = w.with_prefix_of("embeddings.word_embeddings.weight", &["", "electra.", "discriminator."])?;
        let root = w.root();
        let eps = c.layer_norm_eps as f32;
        let layers = c.layers(&root)?;
        let embeddings = root.pp("embeddings");
        Ok(Electra {
            word: embeddings.matrix("word_embeddings.weight", [c.vocab_size, e])?,
            position: embeddings.matrix("position_embeddings.weight", [c.max_position_embeddings, e])?,
            token_type: embeddings.matrix("token_type_embeddings.weight", [c.type_vocab_size, e])?,
            embedding_norm: embeddings.layer_norm("LayerNorm", e, eps)?,
            project: if e != d { Some(root.linear("embeddings_project", e, d)?) } else { None },
            layers,
            config,
        })
    }
}

impl Network for Electra {
    fn architecture(&self) -> &str {
        "electra"
    }

    fn places(&self) -> Vec<PlaceInfo> {
        vec![self.config.bert.place()]
    }

    fn d_model(&self) -> usize {
        self.config.bert.hidden_size
    }

    fn max_tokens(&self) -> usize {
        self.config.bert.max_position_embeddings
    }

    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        encode_rows(&self.config.bert.place(), &self.layers, batch, settings, |row| {
            let mut x = nn::embed_with_positions(&self.word, &self.position, &row.ids, 1.0)?; // (T, E)
            x += &self.token_type.row(0);
            let x = self.embedding_norm.forward(x.view());
            match &self.project {
                Some(project) => project.forward(x.view()), // (T, D)
                None => Ok(x),
            }
        })
    }
}

/// The registry's loader for `electra`.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let cfg: ElectraConfig = m.config()?;
    let pad = m.pad(cfg.bert.vocab_size, cfg.bert.pad_token_id.unwrap_or(0))?;
    Ok(Loaded { net: Box::new(Electra::load(m.weights, cfg)?), pad })
}
