//! GPT-Neo (`gpt_neo`: EleutherAI's GPT-Neo, the TinyStories models), mirroring transformers'
//! `models/gpt_neo/modeling_gpt_neo.py`. GPT-2's pre-LN blocks with learnt positions, but:
//! its scores are **not** scaled (no ÷√d_k), its q/k/v projections have no bias, and its
//! layers alternate global attention with local attention, where a query sees only the last
//! `window_size` keys (itself included). The window is recorded as that layer's mask.

use std::sync::Arc;

use serde::Deserialize;

use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::attention::sdpa::ScoreScale;
use crate::error::{Error, FileProblem, Result};
use crate::models::config::{activation, check_sizes, decoder_head, Loading, TokenIds};
use crate::models::decoder_only::{DecoderOnly, EmptyRows, TokenEmbeddings};
use crate::models::network::Loaded;
use crate::models::pre_norm::{PreNormBlock, PreNormStack};
use crate::nn::{FeedForward, Mlp, Norm};
use crate::run::PlaceInfo;

/// `config.json` of a GPT-Neo model, with transformers' defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct GptNeoConfig {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_layers: usize,
    pub num_heads: usize,
    pub intermediate_size: Option<usize>,
    pub window_size: usize,
    pub activation_function: String,
    pub layer_norm_epsilon: f64,
    pub max_position_embeddings: usize,
    /// `[[["global", "local"], n], …]`: a pattern of layer types and how often it repeats.
    pub attention_types: Vec<(Vec<String>, usize)>,
    /// The expanded per-layer list transformers 5 also saves; it wins when present.
    pub attention_layers: Option<Vec<String>>,
    pub eos_token_id: Option<TokenIds>,
}

impl Default for GptNeoConfig {
    fn default() -> Self {
        GptNeoConfig {
            vocab_size: 50257,
            hidden_size: 2048,
            num_layers: 24,
            num_heads: 16,
            intermediate_size: None,
            window_size: 256,
            activation_function: "gelu_new".into(),
            layer_norm_epsilon: 1e-5,
            max_position_embeddings: 2048,
            attention_types: vec![(vec!["global".into(), "local".into()], 12)],
            attention_layers: None,
            eos_token_id: Some(TokenIds::One(50256)),
        }
    }
}

impl GptNeoConfig {
    /// Each layer's window: `window_size` for a local layer, none for a global one.
    fn windows(&self) -> Result<Vec<Option<usize>>> {
        // transformers expands attention_types and ignores attention_layers, which its files
        // also hold: the two must agree
        let types: Vec<String> = self
            .attention_types
            .iter()
            .flat_map(|(pattern, n)| {
                pattern.iter().cycle().take(pattern.len().saturating_mul(*n).min(1 << 16)).cloned()
            })
            .collect();
        if types.len() != self.num_layers {
            let reason = format!("its layer types must number num_layers = {}", self.num_layers);
            return Err(Error::file("config.json", FileProblem::impossible("attention_types", types.len(), &reason)));
        }
        if self.attention_layers.as_ref().is_some_and(|layers| *layers != types) {
            let reason = "it must be attention_types written out, layer by layer";
            let layers = self.attention_layers.as_ref().map_or(0, Vec::len);
            return Err(Error::file("config.json", FileProblem::impossible("attention_layers", layers, reason)));
        }
        types
            .iter()
            .map(|t| match t.as_str() {
                "global" => Ok(None),
                "local" => Ok(Some(self.window_size)),
                other => Err(Error::file(
                    "config.json",
                    FileProblem::unsupported("attention_types", other, "headmap reads global and local layers"),
                )),
            })
            .collect()
    }
}

/// The registry's loader for `gpt_neo`, padded with the end-of-text token.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let c: GptNeoConfig = m.config()?;
    let pad = m.pad(c.vocab_size, c.eos_token_id.as_ref().map_or(0, TokenIds::first))?;
    let inner = c.intermediate_size.unwrap_or(4 * c.hidden_size);
    check_sizes(&[
        ("vocab_size", c.vocab_size),
        ("hidden_size", c.hidden_size),
        ("num_layers", c.num_layers),
        ("num_heads", c.num_heads),
        ("intermediate_size", inner),
        ("window_size", c.window_size),
        ("max_position_embeddings", c.max_position_embeddings),
    ])?;
    let windows = c.windows()?;
    let w = m.weights.with_prefix_of("wte.weight", &["", "transformer."])?;
    let root = w.root();
    let (d, eps) = (c.hidden_size, c.layer_norm_epsilon as f32);
    let act = activation("activation_function", &c.activation_function)?;
    let blocks = (0..c.num_layers)
        .map(|i| {
            let h = root.pp("h").pp(i);
            let a = h.pp("attn.attention");
            let attn = MultiHeadAttention::new(
                a.linear_no_bias("q_proj", d, d)?,
                a.linear_no_bias("k_proj", d, d)?,
                a.linear_no_bias("v_proj", d, d)?,
                a.linear("out_proj", d, d)?,
                c.num_heads,
            )?;
            Ok(PreNormBlock {
                ln_1: Norm::Layer(h.layer_norm("ln_1", d, eps)?),
                attn: Arc::new(attn.with_score_scale(ScoreScale::None)),
                cross: None,
                ln_2: Norm::Layer(h.layer_norm("ln_2", d, eps)?),
                // mlp.c_fc, mlp.c_proj (nn.Linear, unlike GPT-2's Conv1D)
                mlp: Mlp::Plain(FeedForward {
                    inner: h.pp("mlp").linear("c_fc", d, inner)?,
                    outer: h.pp("mlp").linear("c_proj", inner, d)?,
                    activation: act,
                }),
                parallel: false,
            })
        })
        .collect::<Result<_>>()?;
    let embeddings = TokenEmbeddings {
        tokens: Arc::new(root.matrix("wte.weight", [c.vocab_size, d])?),
        positions: Some(root.matrix("wpe.weight", [c.max_position_embeddings, d])?),
    };
    let stack =
        PreNormStack { place: Place::DecoderSelf, blocks, final_norm: Norm::Layer(root.layer_norm("ln_f", d, eps)?) };
    let place = PlaceInfo::new(Place::DecoderSelf, MaskKind::Causal, c.num_layers, c.num_heads, d / c.num_heads);
    let (place, max) = (place.windowed(windows), c.max_position_embeddings);
    let head = decoder_head(m.config, &w, "lm_head.weight", &embeddings.tokens, true)?;
    let net = DecoderOnly::new("gpt_neo", place, (d, max), embeddings, stack, EmptyRows::OnceMasked, head);
    Ok(Loaded { net: Box::new(net), pad })
}
