//! Llama-style decoders: `llama` (TinyLlama, SmolLM, Llama 2 and 3), `qwen2` (Qwen2, Qwen2.5)
//! and `mistral`, mirroring transformers' `models/{llama,qwen2,mistral}/modeling_*.py`.
//!
//! ```text
//! x = embed_tokens[ids]
//! per layer:  h = RMSNorm(x);  x += o_proj(attention(h));  x += down(silu(gate(h')) ⊙ up(h')), h' = RMSNorm(x)
//! attention:  q (H heads), k, v (KV heads, grouped-query) of width head_dim; q and k turned
//!             by RoPE; scores ÷√head_dim; causal mask (a sliding window in Mistral, and in the
//!             layers Qwen2 marks sliding when `use_sliding_window` is on)
//! ```
//!
//! They differ in biases (Qwen2's q/k/v always have one; Llama's iff `attention_bias`, its MLP's
//! iff `mlp_bias`; Mistral none) and in windows.

use std::sync::Arc;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use crate::attention::mask::MaskKind;
use crate::attention::multi_head::{HeadShape, MultiHeadAttention};
use crate::attention::place::Place;
use crate::attention::position::PositionScheme;
use crate::error::{Error, FileProblem, Result};
use crate::models::config::{activation, check_sizes, decoder_head, Loading, TokenIds};
use crate::models::decoder_only::{DecoderOnly, EmptyRows, TokenEmbeddings};
use crate::models::network::Loaded;
use crate::models::pre_norm::{PreNormBlock, PreNormStack};
use crate::models::rope::{rotary, RopeSettings};
use crate::nn::{GatedFeedForward, Mlp, Norm};
use crate::run::PlaceInfo;
use crate::tokenize::MAX_TOKENS;

/// A key that may be absent (`None`), null (`Some(None)`) or set: Mistral's `sliding_window`
/// defaults to 4096 when absent but is off when null.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> std::result::Result<Option<Option<T>>, D::Error> {
    Ok(Some(Option::deserialize(d)?))
}

/// `config.json` of a Llama, Qwen2 or Mistral model, with transformers' Llama defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct LlamaConfig {
    pub model_type: String,
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: Option<usize>,
    /// The width of one head; hidden_size / num_attention_heads when absent.
    pub head_dim: Option<usize>,
    pub hidden_act: String,
    pub max_position_embeddings: usize,
    pub rms_norm_eps: f64,
    pub rope_theta: Option<f64>,
    pub rope_scaling: Option<Value>,
    pub rope_parameters: Option<Value>,
    pub partial_rotary_factor: Option<f64>,
    pub original_max_position_embeddings: Option<usize>,
    pub attention_bias: bool,
    pub mlp_bias: bool,
    #[serde(deserialize_with = "present")]
    pub sliding_window: Option<Option<usize>>,
    pub use_sliding_window: bool,
    pub max_window_layers: usize,
    pub layer_types: Option<Vec<String>>,
    pub eos_token_id: Option<TokenIds>,
}

impl Default for LlamaConfig {
    fn default() -> Self {
        LlamaConfig {
            model_type: "llama".into(),
            vocab_size: 32000,
            hidden_size: 4096,
            intermediate_size: 11008,
            num_hidden_layers: 32,
            num_attention_heads: 32,
            num_key_value_heads: None,
            head_dim: None,
            hidden_act: "silu".into(),
            max_position_embeddings: 2048,
            rms_norm_eps: 1e-6,
            rope_theta: None,
            rope_scaling: None,
            rope_parameters: None,
            partial_rotary_factor: None,
            original_max_position_embeddings: None,
            attention_bias: false,
            mlp_bias: false,
            sliding_window: None,
            use_sliding_window: false,
            max_window_layers: 28,
            layer_types: None,
            eos_token_id: Some(TokenIds::One(2)),
        }
    }
}

impl LlamaConfig {
    pub fn kv_heads(&self) -> usize {
        self.num_key_value_heads.unwrap_or(self.num_attention_heads)
    }

    pub fn head_dim(&self) -> usize {
        self.head_dim.unwrap_or(self.hidden_size / self.num_attention_heads.max(1))
    }

    /// Each layer's window: Mistral windows every layer (4096 when the key is absent, none
    /// when null); Qwen2 only with `use_sliding_window`, the layers from `max_window_layers`
    /// on or those `layer_types` marks sliding; Llama none.
    fn windows(&self) -> Result<Vec<Option<usize>>> {
        let layers = self.num_hidden_layers;
        match self.model_type.as_str() {
            "mistral" => Ok(vec![self.sliding_window.unwrap_or(Some(4096)); layers]),
            "qwen2" => {
                let window = if self.use_sliding_window { self.sliding_window.unwrap_or(Some(4096)) } else { None };
                let types = match &self.layer_types {
                    Some(types) => types.clone(),
                    None => (0..layers)
                        .map(|i| {
                            if window.is_some() && i >= self.max_window_layers {
                                "sliding_attention"
                            } else {
                                "full_attention"
                            }
                            .to_string()
                        })
                        .collect(),
                };
                if types.len() != layers {
                    let reason = format!("it must name one type per layer ({layers})");
                    return Err(Error::file(
                        "config.json",
                        FileProblem::impossible("layer_types", types.len(), &reason),
                    ));
                }
                types
                    .iter()
                    .map(|t| match t.as_str() {
                        "full_attention" => Ok(None),
                        "sliding_attention" => Ok(window),
                        other => Err(Error::file(
                            "config.json",
                            FileProblem::unsupported(
                                "layer_types",
                                other,
                                "headmap reads full_attention and sliding_attention layers",
                            ),
                        )),
                    })
                    .collect()
            }
            _ => Ok(vec![None; layers]),
        }
    }

    fn rope(&self) -> RopeSettings<'_> {
        RopeSettings {
            parameters: self.rope_parameters.as_ref(),
            scaling: self.rope_scaling.as_ref(),
            theta: self.rope_theta,
            default_theta: 10000.0,
            partial: self.partial_rotary_factor,
            default_partial: 1.0,
            original_max_positions: self.original_max_position_embeddings,
            max_positions: self.max_position_embeddings,
        }
    }
}

/// The registry's loader for `llama`, `qwen2` and `mistral`, padded with the end-of-text token.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let mut c: LlamaConfig = m.config()?;
    c.model_type = m.model_type.to_string();
    let pad = m.pad(c.vocab_size, c.eos_token_id.as_ref().map_or(0, TokenIds::first))?;
    let (heads, kv_heads, head_dim) = (c.num_attention_heads, c.kv_heads(), c.head_dim());
    check_sizes(&[
        ("vocab_size", c.vocab_size),
        ("hidden_size", c.hidden_size),
        ("intermediate_size", c.intermediate_size),
        ("num_hidden_layers", c.num_hidden_layers),
        ("num_attention_heads", heads),
        ("num_key_value_heads", kv_heads),
        ("head_dim", head_dim),
        ("max_position_embeddings", c.max_position_embeddings),
    ])?;
    if heads % kv_heads != 0 {
        let reason = format!("it must divide num_attention_heads = {heads}");
        return Err(Error::file("config.json", FileProblem::impossible("num_key_value_heads", kv_heads, &reason)));
    }
    let windows = c.windows()?;
    if let Some(&Some(0)) = windows.iter().find(|w| **w == Some(0)) {
        return Err(Error::file("config.json", FileProblem::impossible("sliding_window", 0, "it must be at least 1")));
    }
    let rotary = rotary(&c.rope(), head_dim)?;
    let (qkv_bias, o_bias, mlp_bias) = match c.model_type.as_str() {
        "qwen2" => (true, false, false),
        "mistral" => (false, false, false),
        _ => (c.attention_bias, c.attention_bias, c.mlp_bias),
    };
    let w = m.weights.with_prefix_of("embed_tokens.weight", &["", "model."])?;
    let root = w.root();
    let (d, eps) = (c.hidden_size, c.rms_norm_eps as f32);
    let act = activation("hidden_act", &c.hidden_act)?;
    let shape = HeadShape { heads, kv_heads, head_dim };
    let blocks = (0..c.num_hidden_layers)
        .map(|i| {
            let l = root.pp("layers").pp(i);
            let a = l.pp("self_attn");
            let attention = MultiHeadAttention::with_shape(
                a.linear_with("q_proj", d, heads * head_dim, qkv_bias)?,
                a.linear_with("k_proj", d, kv_heads * head_dim, qkv_bias)?,
                a.linear_with("v_proj", d, kv_heads * head_dim, qkv_bias)?,
                a.linear_with("o_proj", heads * head_dim, d, o_bias)?,
                shape,
            )?;
            let mlp = l.pp("mlp");
            Ok(PreNormBlock {
                ln_1: Norm::Rms(l.rms_norm("input_layernorm", d, eps)?),
                attn: Arc::new(attention.with_positions(PositionScheme::Rotary(rotary.clone()))),
                cross: None,
                ln_2: Norm::Rms(l.rms_norm("post_attention_layernorm", d, eps)?),
                mlp: Mlp::Gated(GatedFeedForward {
                    gate: mlp.linear_with("gate_proj", d, c.intermediate_size, mlp_bias)?,
                    up: mlp.linear_with("up_proj", d, c.intermediate_size, mlp_bias)?,
                    down: mlp.linear_with("down_proj", c.intermediate_size, d, mlp_bias)?,
                    activation: act,
                }),
                parallel: false,
            })
        })
        .collect::<Result<_>>()?;
    let tokens = Arc::new(root.matrix("embed_tokens.weight", [c.vocab_size, d])?);
    let embeddings = TokenEmbeddings { tokens, positions: None };
    let stack =
        PreNormStack { place: Place::DecoderSelf, blocks, final_norm: Norm::Rms(root.rms_norm("norm", d, eps)?) };
    let place = PlaceInfo::new(Place::DecoderSelf, MaskKind::Causal, c.num_hidden_layers, heads, head_dim);
    let place = place.grouped(kv_heads).windowed(windows);
    let max = c.max_position_embeddings.min(MAX_TOKENS);
    let head = decoder_head(m.config, &w, "lm_head.weight", &embeddings.tokens, false)?;
    let net = DecoderOnly::new(&c.model_type, place, (d, max), embeddings, stack, EmptyRows::EveryKey, head);
    Ok(Loaded { net: Box::new(net), pad })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn windows(config: serde_json::Value) -> Vec<Option<usize>> {
        serde_json::from_value::<LlamaConfig>(config).unwrap().windows().unwrap()
    }

    #[test]
    fn windows_as_each_family_reads_them() {
        use serde_json::json;
        let qwen2 = |on: bool| json!({"model_type": "qwen2", "num_hidden_layers": 3, "sliding_window": 4, "use_sliding_window": on, "max_window_layers": 1});
        assert_eq!(windows(qwen2(true)), [None, Some(4), Some(4)], "sliding from max_window_layers on");
        assert_eq!(windows(qwen2(false)), [None, None, None], "a window given but not used");
        let typed = json!({"model_type": "qwen2", "num_hidden_layers": 2, "sliding_window": 8, "use_sliding_window": true,
                           "layer_types": ["sliding_attention", "full_attention"]});
        assert_eq!(windows(typed), [Some(8), None]);
        assert_eq!(
            windows(json!({"model_type": "mistral", "num_hidden_layers": 2})),
            [Some(4096), Some(4096)],
            "absent: 4096"
        );
        assert_eq!(windows(json!({"model_type": "mistral", "num_hidden_layers": 1, "sliding_window": null})), [None]);
        assert_eq!(windows(json!({"model_type": "llama", "num_hidden_layers": 1, "sliding_window": 4})), [None]);
    }
}
