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

use ndarray::{Array1, Axis};
use serde::Deserialize;
use serde_json::Value;

use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::attention::position::PositionScheme;
use crate::error::{Error, Result};
use crate::models::config::{activation, check_sizes, decoder_head, Loading, TokenIds};
use crate::models::decoder_only::{DecoderOnly, EmptyRows, TokenEmbeddings};
use crate::models::network::Loaded;
use crate::models::pre_norm::{PreNormBlock, PreNormStack};
use crate::models::rope::{rotary, RopeSettings};
use crate::models::weights::Vars;
use crate::nn::{FeedForward, Linear, Mlp, Norm};
use crate::run::PlaceInfo;
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

/// The registry's loader for `gpt_neox`, padded with the end-of-text token.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let c: GptNeoXConfig = m.config()?;
    let pad = m.pad(c.vocab_size, c.eos_token_id.as_ref().map_or(0, TokenIds::first))?;
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
    let w = m.weights.with_prefix_of("embed_in.weight", &["", "gpt_neox."])?;
    let root = w.root();
    let eps = c.layer_norm_eps as f32;
    let act = activation("hidden_act", &c.hidden_act)?;
    let blocks = (0..c.num_hidden_layers)
        .map(|i| {
            let l: Vars = root.pp("layers").pp(i);
            let a = l.pp("attention");
            let qkv = a.linear_with("query_key_value", d, 3 * d, c.attention_bias)?; // (D, 3D)
            let [q, k, v] = split_interleaved(&qkv, heads, &format!("layers.{i}.attention.query_key_value"))?;
            let dense = a.linear_with("dense", d, d, c.attention_bias)?;
            Ok(PreNormBlock {
                ln_1: Norm::Layer(l.layer_norm("input_layernorm", d, eps)?),
                attn: Arc::new(
                    MultiHeadAttention::new(q, k, v, dense, heads)?
                        .with_positions(PositionScheme::Rotary(rotary.clone())),
                ),
                cross: None,
                ln_2: Norm::Layer(l.layer_norm("post_attention_layernorm", d, eps)?),
                mlp: Mlp::Plain(FeedForward {
                    inner: l.pp("mlp").linear("dense_h_to_4h", d, c.intermediate_size)?,
                    outer: l.pp("mlp").linear("dense_4h_to_h", c.intermediate_size, d)?,
                    activation: act,
                }),
                parallel: c.use_parallel_residual,
            })
        })
        .collect::<Result<_>>()?;
    let tokens = Arc::new(root.matrix("embed_in.weight", [c.vocab_size, d])?);
    let embeddings = TokenEmbeddings { tokens, positions: None };
    let final_norm = Norm::Layer(root.layer_norm("final_layer_norm", d, eps)?);
    let place = PlaceInfo::new(Place::DecoderSelf, MaskKind::Causal, c.num_hidden_layers, heads, d / heads);
    let max = c.max_position_embeddings.min(MAX_TOKENS);
    let stack = PreNormStack { place: Place::DecoderSelf, blocks, final_norm };
    let head = decoder_head(m.config, &w, "embed_out.weight", &embeddings.tokens, false)?;
    let net = DecoderOnly::new("gpt_neox", place, (d, max), embeddings, stack, EmptyRows::EveryKey, head);
    Ok(Loaded { net: Box::new(net), pad })
}
