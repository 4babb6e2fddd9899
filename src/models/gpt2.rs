//! GPT-2 (`GPT2Model`): gpt2, distilgpt2, KoGPT2 …, mirroring transformers'
//! `models/gpt2/modeling_gpt2.py`. Pre-LN decoder blocks with causal self-attention. Its
//! `Conv1D` layers store weights as (d_in, d_out), and `c_attn` holds Q, K and V side by side.

use ndarray::{s, Array2};
use serde::Deserialize;

use super::layers::{self, Activation};
use super::run::{self_attention_mask, AttentionRun, LayerAttention, Row, RowTokens};
use super::weights::Weights;
use crate::attention::mask::MaskKind;
use crate::attention::multi_head::MultiHeadAttention;
use crate::error::{Error, Result};
use crate::nn::{LayerNorm, Linear};

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
            eos_token_id: Some(50256),
        }
    }
}

struct Block {
    ln_1: LayerNorm,
    attn: MultiHeadAttention, // attn.c_attn split in three + attn.c_proj
    ln_2: LayerNorm,
    c_fc: Linear,
    c_proj: Linear,
}

pub struct Gpt2 {
    pub config: Gpt2Config,
    wte: Array2<f32>, // (V, D)
    wpe: Array2<f32>, // (P, D)
    blocks: Vec<Block>,
    ln_f: LayerNorm,
    activation: Activation,
}

impl Gpt2 {
    pub fn load(w: Weights, config: Gpt2Config) -> Result<Self> {
        if !config.scale_attn_weights || config.scale_attn_by_inverse_layer_idx {
            return Err(Error::file("config.json", "only GPT-2's default attention scaling (÷√d_k) is supported"));
        }
        let w = w.with_prefix_of("wte.weight", &["", "transformer."])?;
        let (d, eps) = (config.n_embd, config.layer_norm_epsilon as f32);
        let inner = config.n_inner.unwrap_or(4 * d);
        let blocks = (0..config.n_layer)
            .map(|i| {
                let p = format!("h.{i}");
                let qkv = layers::conv1d(&w, &format!("{p}.attn.c_attn"), d, 3 * d)?; // (D, 3D)
                let part = |k: usize| {
                    let cols = s![.., k * d..(k + 1) * d];
                    let bias = qkv.bias.as_ref().map(|b| b.slice(s![k * d..(k + 1) * d]).to_owned());
                    Linear::new(&format!("{p}.attn.c_attn[{k}]"), qkv.weight.slice(cols).to_owned(), bias)
                };
                Ok(Block {
                    ln_1: layers::layer_norm(&w, &format!("{p}.ln_1"), d, eps)?,
                    attn: MultiHeadAttention::new(
                        part(0)?,
                        part(1)?,
                        part(2)?,
                        layers::conv1d(&w, &format!("{p}.attn.c_proj"), d, d)?,
                        config.n_head,
                    )?,
                    ln_2: layers::layer_norm(&w, &format!("{p}.ln_2"), d, eps)?,
                    c_fc: layers::conv1d(&w, &format!("{p}.mlp.c_fc"), d, inner)?,
                    c_proj: layers::conv1d(&w, &format!("{p}.mlp.c_proj"), inner, d)?,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Gpt2 {
            wte: w.matrix("wte.weight", [config.vocab_size, d])?,
            wpe: w.matrix("wpe.weight", [config.n_positions, d])?,
            ln_f: layers::layer_norm(&w, "ln_f", d, eps)?,
            activation: Activation::parse(&config.activation_function)?,
            blocks,
            config,
        })
    }

    /// Causal self-attention (with PAD keys masked too) as it was trained (or, to see what
    /// changes, another `mask`), and the last hidden states per row.
    pub fn forward(&self, rows: &[Row], mask: MaskKind) -> Result<(AttentionRun, Vec<Array2<f32>>)> {
        let mut run = AttentionRun::new(mask, true);
        let mut hidden = Vec::with_capacity(rows.len());
        for row in rows {
            let mut x = layers::embed_with_positions(&self.wte, &self.wpe, &row.ids, 1.0)?; // (T, D)
            let row_mask = self_attention_mask(mask, &row.valid)?;
            let mut layers_out = Vec::with_capacity(self.blocks.len());
            for block in &self.blocks {
                let h = block.ln_1.forward(x.view()); // (T, D)
                let a = block.attn.forward(h.view(), h.view(), row_mask.as_ref(), true)?;
                x += &a.output;
                let h2 = block.ln_2.forward(x.view());
                x += &layers::feed_forward(h2.view(), &block.c_fc, &block.c_proj, self.activation)?;
                layers_out.push(LayerAttention { weights: a.weights, x_q: h.clone(), x_kv: h });
            }
            let tokens =
                RowTokens { queries: &row.labels, keys: &row.labels, query_valid: &row.valid, key_valid: &row.valid };
            run.push_row(tokens, layers_out, row_mask);
            hidden.push(self.ln_f.forward(x.view()));
        }
        Ok((run, hidden))
    }

    pub fn block(&self, layer: usize) -> Option<&MultiHeadAttention> {
        self.blocks.get(layer).map(|b| &b.attn)
    }

    pub fn max_tokens(&self) -> usize {
        self.config.n_positions
    }
}
