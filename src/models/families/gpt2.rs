//! GPT-2 (`GPT2Model`): gpt2, distilgpt2, KoGPT2 …, mirroring transformers'
//! `models/gpt2/modeling_gpt2.py`. Pre-LN decoder blocks with causal self-attention. Its
//! `Conv1D` layers store weights as (d_in, d_out), and `c_attn` holds Q, K and V side by side.
//!
//! Two switches from the Stanford CRFM replications: `scale_attn_by_inverse_layer_idx` divides
//! layer i's scores by √d_k · (i + 1) instead of √d_k, and `reorder_and_upcast_attn` computes
//! the same product in f32 (which headmap always does: it changes nothing here).

use std::sync::Arc;

use ndarray::s;
use serde::Deserialize;

use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::attention::sdpa::ScoreScale;
use crate::error::{Error, FileProblem, Result};
use crate::models::config::{activation, check_sizes, decoder_head, Loading};
use crate::models::decoder_only::{DecoderOnly, EmptyRows, TokenEmbeddings};
use crate::models::network::Loaded;
use crate::models::pre_norm::{PreNormBlock, PreNormStack};
use crate::nn::{FeedForward, Linear, Mlp, Norm};
use crate::run::PlaceInfo;

/// `config.json` of a GPT-2 model, with transformers' defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct Gpt2Config {
    pub vocab_size: usize,
    pub n_embd: usize,
    pub n_layer: usize,
    pub n_head: usize,
    pub n_positions: usize,
    pub n_inner: Option<usize>,
    pub activation_function: String,
    pub layer_norm_epsilon: f64,
    pub scale_attn_weights: bool,
    pub scale_attn_by_inverse_layer_idx: bool,
    pub reorder_and_upcast_attn: bool,
    pub add_cross_attention: bool,
    pub eos_token_id: Option<u32>,
}

impl Default for Gpt2Config {
    fn default() -> Self {
        Gpt2Config {
            vocab_size: 50257,
            n_embd: 768,
            n_layer: 12,
            n_head: 12,
            n_positions: 1024,
            n_inner: None,
            activation_function: "gelu_new".into(),
            layer_norm_epsilon: 1e-5,
            scale_attn_weights: true,
            scale_attn_by_inverse_layer_idx: false,
            reorder_and_upcast_attn: false,
            add_cross_attention: false,
            eos_token_id: Some(50256),
        }
    }
}

/// The registry's loader for `gpt2`. Batches are padded with the end-of-text token, as
/// transformers' examples do.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let c: Gpt2Config = m.config()?;
    let pad = m.pad(c.vocab_size, c.eos_token_id.unwrap_or(0))?;
    let inner = c.n_inner.unwrap_or(4 * c.n_embd);
    check_sizes(&[
        ("vocab_size", c.vocab_size),
        ("n_embd", c.n_embd),
        ("n_layer", c.n_layer),
        ("n_head", c.n_head),
        ("n_positions", c.n_positions),
        ("n_inner", inner),
    ])?;
    if c.add_cross_attention {
        let problem =
            FileProblem::unsupported("add_cross_attention", true, "headmap reads GPT-2 as a decoder on its own");
        return Err(Error::file("config.json", problem));
    }
    let w = m.weights.with_prefix_of("wte.weight", &["", "transformer."])?;
    let root = w.root();
    let (d, eps) = (c.n_embd, c.layer_norm_epsilon as f32);
    let act = activation("activation_function", &c.activation_function)?;
    let blocks = (0..c.n_layer)
        .map(|i| {
            let h = root.pp("h").pp(i);
            let qkv = h.pp("attn").conv1d("c_attn", d, 3 * d)?; // (D, 3D)
            let part = |k: usize| {
                let cols = s![.., k * d..(k + 1) * d];
                let bias = qkv.bias.as_ref().map(|b| b.slice(s![k * d..(k + 1) * d]).to_owned());
                Linear::new(&format!("h.{i}.attn.c_attn[{k}]"), qkv.weight.slice(cols).to_owned(), bias)
            };
            let attn =
                MultiHeadAttention::new(part(0)?, part(1)?, part(2)?, h.pp("attn").conv1d("c_proj", d, d)?, c.n_head)?;
            Ok(PreNormBlock {
                ln_1: Norm::Layer(h.layer_norm("ln_1", d, eps)?),
                attn: Arc::new(attn.with_score_scale(c.score_scale(i))), // attn.c_attn split in three + attn.c_proj
                cross: None,
                ln_2: Norm::Layer(h.layer_norm("ln_2", d, eps)?),
                mlp: Mlp::Plain(FeedForward {
                    inner: h.pp("mlp").conv1d("c_fc", d, inner)?,
                    outer: h.pp("mlp").conv1d("c_proj", inner, d)?,
                    activation: act,
                }),
                parallel: false,
            })
        })
        .collect::<Result<_>>()?;
    let embeddings = TokenEmbeddings {
        tokens: Arc::new(root.matrix("wte.weight", [c.vocab_size, d])?),
        positions: Some(root.matrix("wpe.weight", [c.n_positions, d])?),
    };
    let stack =
        PreNormStack { place: Place::DecoderSelf, blocks, final_norm: Norm::Layer(root.layer_norm("ln_f", d, eps)?) };
    let place = PlaceInfo::new(Place::DecoderSelf, MaskKind::Causal, c.n_layer, c.n_head, d / c.n_head);
    let head = decoder_head(m.config, &w, "lm_head.weight", &embeddings.tokens, true)?;
    let net = DecoderOnly::new("gpt2", place, (d, c.n_positions), embeddings, stack, EmptyRows::EveryKey, head);
    Ok(Loaded { net: Box::new(net), pad })
}

impl Gpt2Config {
    /// What layer `layer` divides its scores by: √d_k, times (layer + 1) with
    /// `scale_attn_by_inverse_layer_idx`.
    fn score_scale(&self, layer: usize) -> ScoreScale {
        let d_k = (self.n_embd / self.n_head) as f32;
        match (self.scale_attn_weights, self.scale_attn_by_inverse_layer_idx) {
            (true, false) => ScoreScale::SqrtDk,
            (true, true) => ScoreScale::Divisor(d_k.sqrt() * (layer + 1) as f32),
            (false, true) => ScoreScale::Divisor((layer + 1) as f32),
            (false, false) => ScoreScale::None,
        }
    }
}
