//! DistilBERT (`distilbert`: distilbert-base-uncased and its multilingual sibling), mirroring
//! transformers' `models/distilbert/modeling_distilbert.py`: BERT's post-LN encoder layer under
//! other names, no token types, and a LayerNorm eps fixed at 1e-12 (not in the config).

use std::sync::Arc;

use serde::Deserialize;

use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::error::Result;
use crate::models::config::{activation, check_sizes, Loading};
use crate::models::encoder_only::{masked_lm_head, EncoderEmbeddings, EncoderOnly, MaskedLmNames, Positions};
use crate::models::network::Loaded;
use crate::models::transformer::EncoderLayer;
use crate::nn::FeedForward;
use crate::run::PlaceInfo;

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

/// The registry's loader for `distilbert`.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let c: DistilBertConfig = m.config()?;
    let pad = m.pad(c.vocab_size, c.pad_token_id.unwrap_or(0))?;
    check_sizes(&[
        ("vocab_size", c.vocab_size),
        ("dim", c.dim),
        ("n_layers", c.n_layers),
        ("n_heads", c.n_heads),
        ("hidden_dim", c.hidden_dim),
        ("max_position_embeddings", c.max_position_embeddings),
    ])?;
    let w = m.weights.with_prefix_of("embeddings.word_embeddings.weight", &["", "distilbert."])?;
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
    let e = root.pp("embeddings");
    let embeddings = EncoderEmbeddings {
        word: Arc::new(e.matrix("word_embeddings.weight", [c.vocab_size, d])?),
        position: e.matrix("position_embeddings.weight", [c.max_position_embeddings, d])?,
        positions: Positions::FromZero,
        token_type: None,
        norm: e.layer_norm("LayerNorm", d, LAYER_NORM_EPS)?,
        project: None,
    };
    let place = PlaceInfo::new(Place::EncoderSelf, MaskKind::Padding, c.n_layers, c.n_heads, d / c.n_heads);
    let names = MaskedLmNames { dense: "vocab_transform", norm: "vocab_layer_norm", bias: &["vocab_projector.bias"] };
    let head = masked_lm_head(&w, &names, &embeddings.word, act, LAYER_NORM_EPS)?;
    Ok(Loaded { net: Box::new(EncoderOnly::new("distilbert", place, d, embeddings, layers, head)), pad })
}
