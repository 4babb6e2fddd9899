//! DistilBERT (`distilbert`: distilbert-base-uncased and its multilingual sibling), mirroring
//! transformers' `models/distilbert/modeling_distilbert.py`: BERT's post-LN encoder layer under
//! other names, no token types, and a LayerNorm eps fixed at 1e-12 (not in the config).

use std::sync::Arc;

use ndarray::Array2;
use serde::Deserialize;

use super::bert::encode_rows;
use super::config::{activation, check_sizes, Loading};
use super::network::{Loaded, Network};
use super::run::{Batch, PlaceInfo, Run, Settings};
use super::transformer::EncoderLayer;
use super::weights::Weights;
use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::error::Result;
use crate::nn::{self, FeedForward, LayerNorm};

const LAYER_NORM_EPS: f32 = 1e-12;

/// `config.json` of a DistilBERT model, with transformers' defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct DistilBertConfig {
    pub vocab_size: usize,
    pub dim: usize,
    pub n_layers: usize,
    pub n_heads: usize,
    pub hidden_dim: usize,
    pub activation: String,
    pub max_position_embeddings: usize,
    pub pad_token_id: Option<u32>,
    /// Only how the position table was initialised: the forward reads the stored table either way.
    pub sinusoidal_pos_embds: bool,
}

impl Default for DistilBertConfig {
    fn default() -> Self {
        DistilBertConfig {
            vocab_size: 30522,
            dim: 768,
            n_layers: 6,
            n_heads: 12,
            hidden_dim: 3072,
            activation: "gelu".into(),
            max_position_embeddings: 512,
            pad_token_id: Some(0),
            sinusoidal_pos_embds: false,
        }
    }
}

pub struct DistilBert {
    pub config: DistilBertConfig,
    word: Array2<f32>,     // (V, D) embeddings.word_embeddings
    position: Array2<f32>, // (P, D) embeddings.position_embeddings
    embedding_norm: LayerNorm,
    layers: Vec<EncoderLayer>, // transformer.layer.N
}

impl DistilBert {
    fn load(w: Weights, config: DistilBertConfig) -> Result<Self> {
        let c = &config;
        check_sizes(&[
            ("vocab_size", c.vocab_size),
            ("dim", c.dim),
            ("n_layers", c.n_layers),
            ("n_heads", c.n_heads),
            ("hidden_dim", c.hidden_dim),
            ("max_position_embeddings", c.max_position_embeddings),
        ])?;
        let w = w.with_prefix_of("embeddings.word_embeddings.weight", &["", "distilbert."])?;
        let root = w.root();
        let d = c.dim;
        let act = activation("activation", &c.activation)?;
        let layers = (0..c.n_layers)
            .map(|i| {
                let l = root.pp("transformer.layer").pp(i);
                let a = l.pp("attention");
                Ok(EncoderLayer {
                    self_attn: Arc::new(MultiHeadAttention::new(
                        a.linear("q_lin", d, d)?,
                        a.linear("k_lin", d, d)?,
                        a.linear("v_lin", d, d)?,
                        a.linear("out_lin", d, d)?,
                        c.n_heads,
                    )?),
                    self_attn_norm: l.layer_norm("sa_layer_norm", d, LAYER_NORM_EPS)?,
                    ffn: FeedForward {
                        inner: l.pp("ffn").linear("lin1", d, c.hidden_dim)?,
                        outer: l.pp("ffn").linear("lin2", c.hidden_dim, d)?,
                        activation: act,
                    },
                    final_norm: l.layer_norm("output_layer_norm", d, LAYER_NORM_EPS)?,
                })
            })
            .collect::<Result<_>>()?;
        let embeddings = root.pp("embeddings");
        Ok(DistilBert {
            word: embeddings.matrix("word_embeddings.weight", [c.vocab_size, d])?,
            position: embeddings.matrix("position_embeddings.weight", [c.max_position_embeddings, d])?,
            embedding_norm: embeddings.layer_norm("LayerNorm", d, LAYER_NORM_EPS)?,
            layers,
            config,
        })
    }

    fn place(&self) -> PlaceInfo {
        let c = &self.config;
        PlaceInfo::new(Place::EncoderSelf, MaskKind::Padding, c.n_layers, c.n_heads, c.dim / c.n_heads)
    }
}

impl Network for DistilBert {
    fn architecture(&self) -> &str {
        "distilbert"
    }

    fn places(&self) -> Vec<PlaceInfo> {
        vec![self.place()]
    }

    fn d_model(&self) -> usize {
        self.config.dim
    }

    fn max_tokens(&self) -> usize {
        self.config.max_position_embeddings
    }

    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        encode_rows(&self.place(), &self.layers, batch, settings, |row| {
            let x = nn::embed_with_positions(&self.word, &self.position, &row.ids, 1.0)?; // (T, D)
            Ok(self.embedding_norm.forward(x.view()))
        })
    }
}

/// The registry's loader for `distilbert`.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let cfg: DistilBertConfig = m.config()?;
    let pad = m.pad(cfg.vocab_size, cfg.pad_token_id.unwrap_or(0))?;
    Ok(Loaded { net: Box::new(DistilBert::load(m.weights, cfg)?), pad })
}
