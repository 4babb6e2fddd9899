//! GPT-NeoX (`gpt_neox`: EleutherAI's Pythia suite, GPT-NeoX-20B), mirroring transformers'
//! `models/gpt_neox/modeling_gpt_neox.py`.
//!
//! ```text
//! x = embed_in[ids]                           (no position embedding: rotary only)
//! parallel (Pythia):  x = x + attention(LN₁(x)) + mlp(LN₂(x))
//! sequential:         x = x + attention(LN₁(x));  x = x + mlp(LN₂(x))
//! ```
//!
//! `query_key_value` holds Q, K and V per head, interleaved: for head h, its 3·d_k outputs are
//! q_h, then k_h, then v_h (not three blocks as in GPT-2). RoPE turns only the first
//! `rotary_pct` of each head (Pythia: a quarter), rounded as transformers rounds it: 2·⌈dim/2⌉
//! dimensions for dim = int(d_k · rotary_pct), so head size 6 at 0.5 turns 4 (see `rotary`).

use std::sync::Arc;

use ndarray::{Array1, Array2, Axis};
use serde::Deserialize;
use serde_json::Value;

use super::config::{activation, check_sizes, Loading, TokenIds};
use super::decoder_only::{decoder_only, EmptyRows};
use super::network::{Loaded, Network};
use super::rope::{rotary, RopeSettings};
use super::run::{attend, Batch, PlaceInfo, Run, Settings};
use super::weights::{Vars, Weights};
use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::error::{Error, Result};
use crate::nn::{self, FeedForward, LayerNorm, Linear};
use crate::tokenize::MAX_TOKENS;

/// `config.json` of a GPT-NeoX model, with transformers' defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct GptNeoXConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    pub layer_norm_eps: f64,
    pub use_parallel_residual: bool,
    pub attention_bias: bool,
    /// Pythia's names: the share of each head that turns, and the base.
    pub rotary_pct: Option<f64>,
    pub rotary_emb_base: Option<f64>,
    pub rope_scaling: Option<Value>,
    pub rope_parameters: Option<Value>,
    pub eos_token_id: Option<TokenIds>,
}

impl Default for GptNeoXConfig {
    fn default() -> Self {
        GptNeoXConfig {
            vocab_size: 50432,
            hidden_size: 6144,
            num_hidden_layers: 44,
            num_attention_heads: 64,
            intermediate_size: 24576,
            hidden_act: "gelu".into(),
            max_position_embeddings: 2048,
            layer_norm_eps: 1e-5,
            use_parallel_residual: true,
            attention_bias: true,
            rotary_pct: None,
            rotary_emb_base: None,
            rope_scaling: None,
            rope_parameters: None,
            eos_token_id: Some(TokenIds::One(2)),
        }
    }
}

struct Layer {
    input_layernorm: LayerNorm,
    attention: Arc<MultiHeadAttention>, // attention.query_key_value split per head + attention.dense
    post_attention_layernorm: LayerNorm,
    mlp: FeedForward, // mlp.dense_h_to_4h, mlp.dense_4h_to_h
}

pub struct GptNeoX {
    pub config: GptNeoXConfig,
    embed_in: Array2<f32>, // (V, D)
    layers: Vec<Layer>,    // layers.N
    final_layer_norm: LayerNorm,
}

/// Q, K and V out of `query_key_value` (D, 3D), whose columns run head by head: q_h, k_h, v_h.
fn split_interleaved(qkv: &Linear, heads: usize, name: &str) -> Result<[Linear; 3]> {
    let d = qkv.d_in();
    let d_k = d / heads;
    let part = |k: usize| -> Result<Linear> {
        let columns: Vec<usize> = (0..heads).flat_map(|h| (0..d_k).map(move |j| 3 * d_k * h + k * d_k + j)).collect();
        let weight = qkv.weight.select(Axis(1), &columns); // (D, D)
        let bias = qkv.bias.as_ref().map(|b| Array1::from_iter(columns.iter().map(|&c| b[c])));
        Linear::new(&format!("{name}[{k}]"), weight, bias)
    };
    Ok([part(0)?, part(1)?, part(2)?])
}

impl GptNeoX {
    fn load(w: Weights, config: GptNeoXConfig) -> Result<Self> {
        let c = &config;
        check_sizes(&[
            ("vocab_size", c.vocab_size),
            ("hidden_size", c.hidden_size),
            ("num_hidden_layers", c.num_hidden_layers),
            ("num_attention_heads", c.num_attention_heads),
            ("intermediate_size", c.intermediate_size),
            ("max_position_embeddings", c.max_position_embeddings),
        ])?;
        let (d, heads) = (c.hidden_size, c.num_attention_heads);
        if d % heads != 0 {
            return Err(Error::HeadsDoNotDivide { d_model: d, heads });
        }
        let settings = RopeSettings {
            parameters: c.rope_parameters.as_ref(),
            scaling: c.rope_scaling.as_ref(),
            theta: c.rotary_emb_base,
            default_theta: 10000.0,
            partial: c.rotary_pct,
            default_partial: 0.25,
            original_max_positions: None,
            max_positions: c.max_position_embeddings,
        };
        let rotary = rotary(&settings, d / heads)?;
        let w = w.with_prefix_of("embed_in.weight", &["", "gpt_neox."])?;
        let root = w.root();
        let eps = c.layer_norm_eps as f32;
        let act = activation("hidden_act", &c.hidden_act)?;
        let layers = (0..c.num_hidden_layers)
            .map(|i| {
                let l: Vars = root.pp("layers").pp(i);
                let a = l.pp("attention");
                let qkv = a.linear_with("query_key_value", d, 3 * d, c.attention_bias)?; // (D, 3D)
                let [q, k, v] = split_interleaved(&qkv, heads, &format!("layers.{i}.attention.query_key_value"))?;
                let dense = a.linear_with("dense", d, d, c.attention_bias)?;
                Ok(Layer {
                    input_layernorm: l.layer_norm("input_layernorm", d, eps)?,
                    attention: Arc::new(MultiHeadAttention::new(q, k, v, dense, heads)?.rotated(rotary.clone())),
                    post_attention_layernorm: l.layer_norm("post_attention_layernorm", d, eps)?,
                    mlp: FeedForward {
                        inner: l.pp("mlp").linear("dense_h_to_4h", d, c.intermediate_size)?,
                        outer: l.pp("mlp").linear("dense_4h_to_h", c.intermediate_size, d)?,
                        activation: act,
                    },
                })
            })
            .collect::<Result<_>>()?;
        Ok(GptNeoX {
            embed_in: root.matrix("embed_in.weight", [c.vocab_size, d])?,
            final_layer_norm: root.layer_norm("final_layer_norm", d, eps)?,
            layers,
            config,
        })
    }
}

impl Network for GptNeoX {
    fn architecture(&self) -> &str {
        "gpt_neox"
    }

    fn places(&self) -> Vec<PlaceInfo> {
        let c = &self.config;
        let heads = c.num_attention_heads;
        vec![PlaceInfo::new(Place::DecoderSelf, MaskKind::Causal, c.num_hidden_layers, heads, c.hidden_size / heads)]
    }

    fn d_model(&self) -> usize {
        self.config.hidden_size
    }

    fn max_tokens(&self) -> usize {
        self.config.max_position_embeddings.min(MAX_TOKENS)
    }

    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        decoder_only(
            &self.places()[0],
            batch,
            settings,
            EmptyRows::EveryKey,
            |row| nn::embed(&self.embed_in, &row.ids), // (T, D); Model::run_batch checked the length
            |i, x, mask, record| {
                let layer = &self.layers[i];
                let h = Arc::new(layer.input_layernorm.forward(x.view())); // (T, D)
                let a = attend(&layer.attention, &h, &h, mask, settings.scale, record)?;
                if self.config.use_parallel_residual {
                    // both norms read the same x
                    let m = layer.mlp.forward(layer.post_attention_layernorm.forward(x.view()).view())?;
                    *x += &a;
                    *x += &m;
                } else {
                    *x += &a;
                    let m = layer.mlp.forward(layer.post_attention_layernorm.forward(x.view()).view())?;
                    *x += &m;
                }
                Ok(())
            },
            |x| self.final_layer_norm.forward(x.view()),
        )
    }
}

/// The registry's loader for `gpt_neox`. Decoder-only models pad with their end-of-text token, as
/// transformers' examples do.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let cfg: GptNeoXConfig = m.config()?;
    let pad = m.pad(cfg.vocab_size, cfg.eos_token_id.as_ref().map_or(0, TokenIds::first))?;
    Ok(Loaded { net: Box::new(GptNeoX::load(m.weights, cfg)?), pad })
}
