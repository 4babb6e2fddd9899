//! GPT-Neo (`gpt_neo`: EleutherAI's GPT-Neo, the TinyStories models), mirroring transformers'
//! `models/gpt_neo/modeling_gpt_neo.py`. GPT-2's pre-LN blocks with learnt positions, but:
//! its scores are **not** scaled (no ÷√d_k), its q/k/v projections have no bias, and its
//! layers alternate global attention with local attention, where a query sees only the last
//! `window_size` keys (itself included). The window is recorded as that layer's mask.

use std::sync::Arc;

use ndarray::Array2;
use serde::Deserialize;

use super::config::{activation, check_sizes, Loading, TokenIds};
use super::decoder_only::{decoder_only, EmptyRows};
use super::network::{Loaded, Network};
use super::run::{attend, Batch, PlaceInfo, Run, Settings};
use super::weights::Weights;
use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::attention::place::Place;
use crate::attention::sdpa::Scale;
use crate::error::{Error, FileProblem, Result};
use crate::nn::{self, FeedForward, LayerNorm};

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
        let types: Vec<String> = match &self.attention_layers {
            Some(layers) => layers.clone(),
            None => self
                .attention_types
                .iter()
                .flat_map(|(pattern, n)| {
                    pattern.iter().cycle().take(pattern.len().saturating_mul(*n).min(1 << 16)).cloned()
                })
                .collect(),
        };
        if types.len() != self.num_layers {
            let reason = format!("its layer types must number num_layers = {}", self.num_layers);
            let setting = if self.attention_layers.is_some() { "attention_layers" } else { "attention_types" };
            return Err(Error::file("config.json", FileProblem::impossible(setting, types.len(), &reason)));
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

struct Block {
    ln_1: LayerNorm,
    attn: Arc<MultiHeadAttention>, // attn.attention.{q,k,v,out}_proj
    ln_2: LayerNorm,
    mlp: FeedForward, // mlp.c_fc, mlp.c_proj (nn.Linear, unlike GPT-2's Conv1D)
}

pub struct GptNeo {
    pub config: GptNeoConfig,
    wte: Array2<f32>, // (V, D)
    wpe: Array2<f32>, // (P, D)
    blocks: Vec<Block>,
    ln_f: LayerNorm,
    windows: Vec<Option<usize>>,
}

impl GptNeo {
    fn load(w: Weights, config: GptNeoConfig) -> Result<Self> {
        let c = &config;
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
        let w = w.with_prefix_of("wte.weight", &["", "transformer."])?;
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
                Ok(Block {
                    ln_1: h.layer_norm("ln_1", d, eps)?,
                    attn: Arc::new(attn.scaled(Scale::None)),
                    ln_2: h.layer_norm("ln_2", d, eps)?,
                    mlp: FeedForward {
                        inner: h.pp("mlp").linear("c_fc", d, inner)?,
                        outer: h.pp("mlp").linear("c_proj", inner, d)?,
                        activation: act,
                    },
                })
            })
            .collect::<Result<_>>()?;
        Ok(GptNeo {
            wte: root.matrix("wte.weight", [c.vocab_size, d])?,
            wpe: root.matrix("wpe.weight", [c.max_position_embeddings, d])?,
            ln_f: root.layer_norm("ln_f", d, eps)?,
            blocks,
            windows,
            config,
        })
    }
}

impl Network for GptNeo {
    fn architecture(&self) -> &str {
        "gpt_neo"
    }

    fn places(&self) -> Vec<PlaceInfo> {
        let c = &self.config;
        let place = PlaceInfo::new(
            Place::DecoderSelf,
            MaskKind::Causal,
            c.num_layers,
            c.num_heads,
            c.hidden_size / c.num_heads,
        );
        vec![place.windowed(self.windows.clone())]
    }

    fn d_model(&self) -> usize {
        self.config.hidden_size
    }

    fn max_tokens(&self) -> usize {
        self.config.max_position_embeddings
    }

    /// Causal self-attention, local layers windowed; or a what-if mask (the window stays).
    fn forward(&self, batch: &Batch, settings: &Settings) -> Result<Run> {
        decoder_only(
            &self.places()[0],
            batch,
            settings,
            EmptyRows::OnceMasked,
            |row| nn::embed_with_positions(&self.wte, &self.wpe, &row.ids, 1.0), // (T, D)
            |i, x, mask, record| {
                let block = &self.blocks[i];
                let h = Arc::new(block.ln_1.forward(x.view())); // (T, D)
                *x += &attend(&block.attn, &h, &h, mask, settings.scale, record)?;
                let h2 = block.ln_2.forward(x.view());
                *x += &block.mlp.forward(h2.view())?;
                Ok(())
            },
            |x| self.ln_f.forward(x.view()),
        )
    }
}

/// The registry's loader for `gpt_neo`. Decoder-only models pad with their end-of-text token, as
/// transformers' examples do.
pub(crate) fn load(m: Loading) -> Result<Loaded> {
    let cfg: GptNeoConfig = m.config()?;
    let pad = m.pad(cfg.vocab_size, cfg.eos_token_id.as_ref().map_or(0, TokenIds::first))?;
    Ok(Loaded { net: Box::new(GptNeo::load(m.weights, cfg)?), pad })
}
